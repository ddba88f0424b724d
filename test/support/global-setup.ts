/**
 * Runs once before the suite: makes sure what the tests drive is installed, installing Debian's
 * packages when we are root and something is missing; otherwise fails with the exact thing to
 * install:
 * - a redis-server binary, for the tests that need a real Redis;
 * - the real OpenStack clients for the REST API's tests (test/rest/openstack-clients.test.ts):
 *   python3-cyborgclient + python3-openstackclient (the `openstack accelerator` CLI) and
 *   python3-nova (Nova's own client, nova.accelerator.cyborg), under Debian's /usr/bin/python3;
 * - Debian's Placement (placement-api, placement-manage, the uwsgi python3 plugin;
 *   python3-osc-placement for the `openstack resource provider` commands of docs/placement.md);
 * - Debian's Glance (glance-api, glance-manage) for the bitstream catalogue's tests.
 * - chromium, for the console's browser tests (test/console; driven by playwright-core);
 * - curl and jq, for the README's walk-through (test/readme).
 * Then it builds what is stale (scripts/build.mjs): the console the service serves at /console, and
 * the CLI the walk-through runs.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { commandExists, hasUwsgiPython } from "../../bench/lib/placement-server.js";

export const DEBIAN_PYTHON = "/usr/bin/python3";
/** Where Debian's chromium package puts the browser (the first is the binary, the second its wrapper). */
export const CHROMIUM_PATHS = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"];
const runs = (cmd: string) => spawnSync(cmd, ["--version"], { stdio: "ignore" }).status === 0;

interface Need {
  what: string;
  present(): boolean;
  packages: string[];
  hint: string;
}

/** The modules the client tests import, found without importing Nova's (seconds to load). */
const OPENSTACK_CLIENTS_PROBE =
  "import importlib.util as u, sys; " +
  "sys.exit(0 if all(u.find_spec(m) for m in ('cyborgclient.osc.v2', 'openstackclient.shell', 'nova.accelerator.cyborg')) else 1)";

const needs: Need[] = [
  {
    what: "redis-server",
    present: () => spawnSync(process.env.REDIS_SERVER_BIN ?? "redis-server", ["--version"], { stdio: "ignore" }).status === 0,
    packages: ["redis-server"],
    hint:
      "The test suite needs a redis-server binary (Redis >= 7). Install it with `sudo apt-get install redis-server` " +
      "(Debian/Ubuntu) or `brew install redis` (macOS), or set REDIS_SERVER_BIN to its path.",
  },
  {
    what: "the OpenStack clients",
    present: () => spawnSync(DEBIAN_PYTHON, ["-c", OPENSTACK_CLIENTS_PROBE], { stdio: "ignore" }).status === 0,
    packages: ["python3-cyborgclient", "python3-openstackclient", "python3-nova"],
    hint:
      `The REST API's tests drive the real OpenStack clients from Debian's packages, under ${DEBIAN_PYTHON}. ` +
      "Install them with `sudo apt-get install python3-cyborgclient python3-openstackclient python3-nova` (Debian 12 or later).",
  },
  {
    what: "OpenStack Placement",
    present: () => commandExists("placement-api") && commandExists("placement-manage") && hasUwsgiPython(),
    packages: ["placement-api", "python3-osc-placement", "uwsgi-plugin-python3"],
    hint:
      "The Placement tests run Debian's real Placement service. Install it with " +
      "`sudo apt-get install placement-api python3-osc-placement uwsgi-plugin-python3` (Debian 12 / Ubuntu).",
  },
  {
    what: "OpenStack Glance",
    present: () => Boolean(process.env.GLANCE_API_BIN) || (commandExists("glance-api") && commandExists("glance-manage")),
    packages: ["glance-api"],
    hint: "The bitstream catalogue's tests run Debian's real Glance. Install it with `sudo apt-get install --no-install-recommends glance-api` (Debian 12 / Ubuntu).",
  },
  {
    what: "chromium",
    present: () => Boolean(process.env.CHROMIUM_PATH) || CHROMIUM_PATHS.some((p) => existsSync(p)),
    packages: ["chromium"],
    hint:
      "The console's browser tests need Chromium. Install it with `sudo apt-get install chromium` (Debian/Ubuntu), " +
      "or set CHROMIUM_PATH to a Chromium or Chrome binary.",
  },
  {
    what: "curl and jq",
    present: () => runs("curl") && runs("jq"),
    packages: ["curl", "jq"],
    hint: "The README's walk-through test needs curl and jq: install them (`sudo apt-get install curl jq`).",
  },
];

function aptInstall(packages: string[]): void {
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=600", ...packages], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
}

export default function setup(): void {
  install();
  const built = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { stdio: "inherit" });
  if (built.status !== 0) throw new Error("could not build (node scripts/build.mjs)");
}

function install(): void {
  const missing = needs.filter((n) => !n.present());
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (isRoot && spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0) {
    const packages = missing.flatMap((n) => n.packages);
    console.log(`[test setup] ${missing.map((n) => n.what).join(" and ")} not found; installing Debian's ${packages.join(", ")} (apt-get)...`);
    try {
      aptInstall(packages);
    } catch (err) {
      throw new Error(`could not install ${packages.join(", ")} with apt-get: ${(err as Error).message}`);
    }
  }
  const still = needs.filter((n) => !n.present());
  if (still.length) throw new Error(still.map((n) => n.hint).join("\n"));
}

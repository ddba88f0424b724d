/**
 * Runs once before the suite: makes sure what the tests drive exists, installing Debian's
 * packages when we are root and something is missing; otherwise fails with the exact thing to
 * install:
 * - a redis-server binary, for the tests that need a real Redis;
 * - the real OpenStack clients for the REST API's tests (test/rest/openstack-clients.test.ts):
 *   python3-cyborgclient + python3-openstackclient (the `openstack accelerator` CLI) and
 *   python3-nova (Nova's own client, nova.accelerator.cyborg), under Debian's /usr/bin/python3.
 * - chromium, for the console's browser tests (test/console; driven by playwright-core);
 * - curl and jq, for the README's walk-through (test/readme).
 * It also builds what is stale: the console, and the CLI the walk-through runs.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

export const DEBIAN_PYTHON = "/usr/bin/python3";
/** Where Debian's chromium package puts the browser (the first is the binary, the second its wrapper). */
export const CHROMIUM_PATHS = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"];
const OPENSTACK_PACKAGES = ["python3-cyborgclient", "python3-openstackclient", "python3-nova"];

function hasRedis(): boolean {
  const bin = process.env.REDIS_SERVER_BIN ?? "redis-server";
  return spawnSync(bin, ["--version"], { stdio: "ignore" }).status === 0;
}

/** The modules the client tests import, found without importing Nova's (seconds to load). */
function hasOpenStackClients(): boolean {
  const probe =
    "import importlib.util as u, sys; " +
    "sys.exit(0 if all(u.find_spec(m) for m in ('cyborgclient.osc.v2', 'openstackclient.shell', 'nova.accelerator.cyborg')) else 1)";
  return spawnSync(DEBIAN_PYTHON, ["-c", probe], { stdio: "ignore" }).status === 0;
}

const hasChromium = () => Boolean(process.env.CHROMIUM_PATH) || CHROMIUM_PATHS.some((p) => existsSync(p));

function aptInstall(packages: string[]): boolean {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!isRoot || spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status !== 0) return false;
  console.log(`[test setup] installing Debian's ${packages.join(", ")} (apt-get)...`);
  try {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "-qq", ...packages], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  } catch (err) {
    throw new Error(`could not install ${packages.join(", ")} with apt-get: ${(err as Error).message}`);
  }
  return true;
}

export default function setup(): void {
  if (!hasRedis() && !(aptInstall(["redis-server"]) && hasRedis())) {
    throw new Error(
      "The test suite needs a redis-server binary (Redis >= 7). Install it with `sudo apt-get install redis-server` " +
        "(Debian/Ubuntu) or `brew install redis` (macOS), or set REDIS_SERVER_BIN to its path.",
    );
  }
  if (!hasOpenStackClients() && !(aptInstall(OPENSTACK_PACKAGES) && hasOpenStackClients())) {
    throw new Error(
      `The REST API's tests drive the real OpenStack clients from Debian's packages, under ${DEBIAN_PYTHON}. ` +
        `Install them with \`sudo apt-get install ${OPENSTACK_PACKAGES.join(" ")}\` (Debian 12 or later).`,
    );
  }
  if (!hasChromium() && !(aptInstall(["chromium"]) && hasChromium())) {
    throw new Error(
      "The console's browser tests need Chromium. Install it with `sudo apt-get install chromium` (Debian/Ubuntu), " +
        "or set CHROMIUM_PATH to a Chromium or Chrome binary.",
    );
  }
  for (const tool of ["curl", "jq"]) {
    const has = () => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0;
    if (!has() && !(aptInstall([tool]) && has())) throw new Error(`The README's walk-through test needs ${tool}: install it (apt-get install ${tool}).`);
  }
  // What npm run build makes: the console served at /console, and the CLI the walk-through runs.
  const built = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { stdio: "inherit" });
  if (built.status !== 0) throw new Error("could not build (node scripts/build.mjs)");
}

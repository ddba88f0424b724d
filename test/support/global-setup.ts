/**
 * Runs once before the suite: makes sure the servers some tests start are installed: a
 * redis-server binary, and Debian's Placement (placement-api, placement-manage, the uwsgi python3
 * plugin; python3-osc-placement for the `openstack resource provider` commands of the README).
 * Installs Debian's packages when we are root and something is missing; otherwise fails with the
 * exact thing to install.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { commandExists, hasUwsgiPython } from "../../bench/lib/placement-server.js";

interface Need {
  what: string;
  present(): boolean;
  packages: string[];
  hint: string;
}

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
    what: "OpenStack Placement",
    present: () => commandExists("placement-api") && commandExists("placement-manage") && hasUwsgiPython(),
    packages: ["placement-api", "python3-osc-placement", "uwsgi-plugin-python3"],
    hint:
      "The Placement tests run Debian's real Placement service. Install it with " +
      "`sudo apt-get install placement-api python3-osc-placement uwsgi-plugin-python3` (Debian 12 / Ubuntu).",
  },
];

function aptInstall(packages: string[]): void {
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=600", ...packages], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
}

export default function setup(): void {
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

/**
 * Runs once before the suite: makes sure a redis-server binary exists for the tests that need a
 * real Redis. Installs Debian's package when we are root and it is missing; otherwise fails with
 * the exact thing to install.
 */
import { execFileSync, spawnSync } from "node:child_process";

function hasRedis(): boolean {
  const bin = process.env.REDIS_SERVER_BIN ?? "redis-server";
  return spawnSync(bin, ["--version"], { stdio: "ignore" }).status === 0;
}

export default function setup(): void {
  if (hasRedis()) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (isRoot && spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0) {
    console.log("[test setup] redis-server not found; installing Debian's redis-server package (apt-get)...");
    try {
      execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
      execFileSync("apt-get", ["install", "-y", "-qq", "redis-server"], {
        stdio: "inherit",
        env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      });
    } catch (err) {
      throw new Error(`could not install redis-server with apt-get: ${(err as Error).message}`);
    }
    if (hasRedis()) return;
  }
  throw new Error(
    "The test suite needs a redis-server binary (Redis >= 7). Install it with `sudo apt-get install redis-server` " +
      "(Debian/Ubuntu) or `brew install redis` (macOS), or set REDIS_SERVER_BIN to its path.",
  );
}

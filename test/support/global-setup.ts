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

/**
 * Glance (Debian's glance-api) for the bitstream-catalogue tests: installed when missing and we
 * are root; otherwise those tests are skipped with a message (test/support/glance.ts).
 */
function ensureGlance(): void {
  const has = () => spawnSync("sh", ["-c", "command -v glance-api && command -v glance-manage"], { stdio: "ignore" }).status === 0;
  if (has() || process.env.GLANCE_API_BIN) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!isRoot || spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status !== 0) return;
  console.log("[test setup] glance-api not found; installing Debian's glance-api package (apt-get, about a minute)...");
  try {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "glance-api"], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  } catch (err) {
    console.warn(`[test setup] could not install glance-api (${(err as Error).message}); the Glance tests will be skipped`);
  }
}

export default function setup(): void {
  ensureGlance();
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

/**
 * A throwaway Glance (Debian's glance-api) for the tests that need one, as redis-server is for
 * Redis: its own directory (sqlite database, file store), the unauthenticated pipeline (empty paste
 * flavor: every request acts as admin), a free loopback port, one worker; stopped by its PID.
 * The recipe is /work/shared/docs/openstack-services.md; global-setup.ts makes sure glance-api is installed.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../bench/lib/redis-server.js";

export const GLANCE_API_BIN = process.env.GLANCE_API_BIN ?? "glance-api";
export const GLANCE_MANAGE_BIN = process.env.GLANCE_MANAGE_BIN ?? "glance-manage";

export interface TestGlance {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startGlance(): Promise<TestGlance> {
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-glance-"));
  const port = await freePort();
  const conf = join(dir, "glance-api.conf");
  writeFileSync(
    conf,
    [
      "[DEFAULT]",
      "bind_host = 127.0.0.1",
      `bind_port = ${port}`,
      "workers = 1",
      "[database]",
      `connection = sqlite:///${join(dir, "glance.db")}`,
      "[paste_deploy]",
      "flavor =",
      "config_file = /etc/glance/glance-api-paste.ini",
      "[glance_store]",
      "stores = file",
      "default_store = file",
      `filesystem_store_datadir = ${join(dir, "images")}/`,
      "",
    ].join("\n"),
  );
  const sync = spawnSync(GLANCE_MANAGE_BIN, ["--config-file", conf, "db_sync"], { encoding: "utf8" });
  if (sync.status !== 0) throw new Error(`glance-manage db_sync failed: ${sync.stderr}`);
  const proc = spawn(GLANCE_API_BIN, ["--config-file", conf], { stdio: "ignore" });
  await new Promise<void>((resolve, reject) => {
    proc.once("spawn", resolve);
    proc.once("error", (err) => reject(new Error(`cannot start ${GLANCE_API_BIN}: ${err.message}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/versions`, { signal: AbortSignal.timeout(2000) })).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || proc.exitCode !== null) {
      await stop();
      throw new Error(`glance-api did not answer on port ${port}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, pid: proc.pid!, stop };
}

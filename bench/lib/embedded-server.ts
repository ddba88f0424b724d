import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveNodeFlags } from "../../src/cli/node-flags.js";
import { freePort } from "./redis-server.js";

export const BENCH_TOKENS = {
  admin: "bench-admin-token-0123456789",
  service: "bench-service-token-0123456789",
};

/** A token file entry (src/api/auth/tokens.ts). */
export interface BenchToken {
  name: string;
  token: string;
  roles: string[];
  projectId?: string;
  hostname?: string;
}

/**
 * `cyborg-es serve` in its own process (as in production: the load generator must not share the
 * server's event loop), on a free port, with a throwaway data dir and known tokens (the admin and
 * service tokens, and `tokens` besides: agents' tokens, say). `beforeStart` may write the data
 * directory first (a log to start on).
 */
export async function startBenchServer(env: Record<string, string> = {}, tokens: BenchToken[] = [], beforeStart?: (dataDir: string) => Promise<void>) {
  const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-bench-"));
  await beforeStart?.(dataDir);
  const tokensFile = join(dataDir, "bench-tokens.json");
  writeFileSync(
    tokensFile,
    JSON.stringify({
      tokens: [
        { name: "admin", token: BENCH_TOKENS.admin, roles: ["admin"], projectId: "admin" },
        { name: "nova", token: BENCH_TOKENS.service, roles: ["service"], projectId: "service" },
        ...tokens,
      ],
    }),
  );
  const port = await freePort();
  const cli = new URL("../../src/cli/index.js", import.meta.url).pathname;
  // As `npm start` runs it (src/cli/node-flags.ts, docs/deployment.md), and
  // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": more node options for the server.
  const nodeArgs = [...serveNodeFlags(), ...(process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean)];
  const base = `http://127.0.0.1:${port}`;
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [...nodeArgs, cli, "serve"], {
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, AUTH_TOKENS_FILE: tokensFile, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "inherit", "inherit"],
    });
    const deadline = Date.now() + 600_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`);
      const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
      if (ok) return child;
      if (Date.now() > deadline) throw new Error("the server did not become ready within 10 minutes");
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async (c: ChildProcess) => {
    if (c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGTERM");
    await exited;
  };
  let child = await launch();
  return {
    url: `${base}/graphql`,
    dataDir,
    get pid() {
      return child.pid!;
    },
    /** Stops the server and starts it again on the same data; resolves the milliseconds from the start to ready. */
    async restart(): Promise<number> {
      await stop(child);
      const t0 = performance.now();
      child = await launch();
      return performance.now() - t0;
    },
    async close() {
      await stop(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

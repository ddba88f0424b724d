import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { YOUNG_GENERATION } from "../../src/cli/young-generation.js";
import { freePort } from "./redis-server.js";

export const BENCH_TOKENS = {
  admin: "bench-admin-token-0123456789",
  service: "bench-service-token-0123456789",
};

/**
 * `cyborg-es serve` in its own process (as in production: the load generator must not share the
 * server's event loop), on a free port, with a throwaway data dir and known tokens.
 */
export async function startBenchServer(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-bench-"));
  const tokensFile = join(dataDir, "bench-tokens.json");
  writeFileSync(
    tokensFile,
    JSON.stringify({
      tokens: [
        { name: "admin", token: BENCH_TOKENS.admin, roles: ["admin"], projectId: "admin" },
        { name: "nova", token: BENCH_TOKENS.service, roles: ["service"], projectId: "service" },
      ],
    }),
  );
  const port = await freePort();
  const cli = new URL("../../src/cli/index.js", import.meta.url).pathname;
  // As `npm start` runs it (the young generation of docs/deployment.md), and
  // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": more node options for the server.
  const nodeArgs = [YOUNG_GENERATION, ...(process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean)];
  const child = spawn(process.execPath, [...nodeArgs, cli, "serve"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, AUTH_TOKENS_FILE: tokensFile, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`);
    const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error("the server did not become ready within 30 s");
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `${base}/graphql`,
    pid: child.pid!,
    async close() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

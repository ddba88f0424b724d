import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TokenRegistry } from "../../src/api/auth/tokens.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { startService } from "../../src/main.js";

export const BENCH_TOKENS = {
  admin: "bench-admin-token-0123456789",
  service: "bench-service-token-0123456789",
};

/** The service in this process on a free port, with a throwaway data dir and known tokens. */
export async function startBenchServer(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-bench-"));
  const config = loadConfig({ PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent", ...env });
  const tokens = new TokenRegistry([
    { name: "admin", token: BENCH_TOKENS.admin, roles: ["admin"], projectId: "admin" },
    { name: "nova", token: BENCH_TOKENS.service, roles: ["service"], projectId: "service" },
  ]);
  const service = await startService(config, createLogger("silent"), { tokens });
  return {
    url: service.url!,
    service,
    async close() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

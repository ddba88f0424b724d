/**
 * What `cyborg-es serve` prints once it serves: where each front door is and how to get the admin
 * token, in plain lines for the person who just ran `npm start` (the log lines are JSON).
 */
import { adminTokenCommand } from "../api/auth/tokens.js";
import type { Config } from "../infra/config.js";

type StartupConfig = Pick<Config, "DATA_DIR" | "AUTH_TOKENS_FILE" | "METRICS" | "METRICS_PORT">;

/** `url` is the GraphQL endpoint the service listens on; a wildcard address is shown as loopback. */
export function startupBlock(config: StartupConfig, url: string): string {
  const api = new URL(url);
  if (api.hostname === "0.0.0.0" || api.hostname === "[::]") api.hostname = "127.0.0.1";
  const origin = api.origin;
  const metrics =
    config.METRICS === "off" ? "off (METRICS=off)" : config.METRICS_PORT !== undefined ? `http://${api.hostname}:${config.METRICS_PORT}/metrics` : `${origin}/metrics   (with the admin token)`;
  const lines = [
    "cyborg-es is serving:",
    `  API       ${origin}/graphql   (GraphQL; the Cyborg v2 REST API at ${origin}/v2)`,
    `  console   ${origin}/console`,
    `  explorer  ${origin}/graphql   (in a browser)`,
    `  metrics   ${metrics}`,
    `  the admin token: ${adminTokenCommand(config)}`,
  ];
  return lines.join("\n");
}

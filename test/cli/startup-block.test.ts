/**
 * What `cyborg-es serve` prints once it serves, for each way it can be configured; the whole
 * block as npm start prints it is checked by test/readme/examples.test.ts.
 */
import { describe, expect, it } from "vitest";
import { adminTokenCommand } from "../../src/api/auth/tokens.js";
import { startupBlock } from "../../src/cli/startup-block.js";

const embedded = { DATA_DIR: "./data", METRICS: "on" as const, METRICS_PORT: undefined, AUTH_TOKENS_FILE: undefined };

describe("the start-up block", () => {
  it("names the API, console, explorer and metrics URLs and the admin token's command for DATA_DIR", () => {
    expect(startupBlock(embedded, "http://127.0.0.1:4000/graphql")).toBe(
      [
        "cyborg-es is serving:",
        "  API       http://127.0.0.1:4000/graphql   (GraphQL; the Cyborg v2 REST API at http://127.0.0.1:4000/v2)",
        "  console   http://127.0.0.1:4000/console",
        "  explorer  http://127.0.0.1:4000/graphql   (in a browser)",
        "  metrics   http://127.0.0.1:4000/metrics   (with the admin token)",
        "  the admin token: jq -r '.tokens[0].token' data/tokens.json",
      ].join("\n"),
    );
  });

  it("shows a wildcard listener on loopback, metrics on their own port or off, and another token file", () => {
    const block = startupBlock({ ...embedded, DATA_DIR: "/srv/my data", METRICS_PORT: 9100 }, "http://0.0.0.0:4100/graphql");
    expect(block).toContain("  console   http://127.0.0.1:4100/console");
    expect(block).toContain("  metrics   http://127.0.0.1:9100/metrics");
    expect(block).toContain("  the admin token: jq -r '.tokens[0].token' '/srv/my data/tokens.json'");
    expect(startupBlock({ ...embedded, METRICS: "off" }, "http://127.0.0.1:4000/graphql")).toContain("  metrics   off (METRICS=off)");
    expect(startupBlock({ ...embedded, AUTH_TOKENS_FILE: "/etc/cyborg/tokens.json" }, "http://127.0.0.1:4000/graphql")).toContain(
      `  the admin token: jq -r 'first(.tokens[] | select(.roles | index("admin"))) | .token' /etc/cyborg/tokens.json`,
    );
  });

  it("quotes a path so that the shell reads it as one word", () => {
    expect(adminTokenCommand({ DATA_DIR: "/tmp/it's here" })).toBe(`jq -r '.tokens[0].token' '/tmp/it'\\''s here/tokens.json'`);
  });
});

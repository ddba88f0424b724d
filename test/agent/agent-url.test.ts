import { describe, expect, it } from "vitest";
import { reportOnce } from "../../src/clients/agent/agent.js";
import { driverEnv } from "../../src/clients/agent/driver-env.js";
import type { Logger } from "../../src/infra/logger.js";
import { defaultUrl } from "../../src/cli/agent.command.js";
import { freePort } from "../../bench/lib/redis-server.js";

describe("where the agent reports", () => {
  it("defaults to the service's PORT and HOST, as npm start in the same environment listens", () => {
    expect(defaultUrl({})).toBe("http://127.0.0.1:4000/graphql");
    expect(defaultUrl({ PORT: "4100" })).toBe("http://127.0.0.1:4100/graphql");
    expect(defaultUrl({ PORT: "4100", HOST: "0.0.0.0" })).toBe("http://127.0.0.1:4100/graphql");
    expect(defaultUrl({ HOST: "10.0.0.5" })).toBe("http://10.0.0.5:4000/graphql");
    expect(defaultUrl({ HOST: "::1" })).toBe("http://[::1]:4000/graphql");
  });

  it("says what it waits for while the service does not answer", async () => {
    const url = `http://127.0.0.1:${await freePort()}/graphql`;
    const lines: Array<{ fields: Record<string, unknown>; msg: string }> = [];
    const log = { warn: (fields: Record<string, unknown>, msg: string) => lines.push({ fields, msg }), info() {}, debug() {}, error() {} } as unknown as Logger;
    const env = driverEnv({ hostname: "h1", drivers: "fake", sysfsRoot: "/sys", lspci: "lspci", pciWhitelist: "[]", nvidiaSkipVfs: false, vgpuTypes: "" });
    await expect(reportOnce({ client: { url, token: "t" }, hostname: "h1", drivers: ["fake"], env, intervalMs: 1000, log, retries: 1, minRetryMs: 10 })).rejects.toThrow(/cannot reach/);
    expect(lines[0]!.msg).toContain(`waiting for the service at ${url}`);
    expect(lines[0]!.msg).toMatch(/CYBORG_URL, or PORT and HOST/);
    expect(lines.at(-1)!.msg).toBe(`gave up on the service at ${url} for this report`);
  });
});

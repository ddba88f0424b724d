import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
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

describe("a busy service", () => {
  it("waits the Retry-After the service gave, then sends the report again", async () => {
    let reports = 0;
    const server = createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        const body = JSON.parse(raw) as { query: string };
        res.setHeader("content-type", "application/json");
        if (body.query.includes("confirmHostInventory")) return res.end(JSON.stringify({ data: { confirmHostInventory: null } }));
        if (++reports === 1) {
          res.statusCode = 503;
          res.setHeader("retry-after", "1");
          return res.end(JSON.stringify({ errors: [{ message: "the service is taking 16 host reports", extensions: { code: "UNAVAILABLE", retryAfterSeconds: 1 } }] }));
        }
        res.end(JSON.stringify({ data: { reportHostInventory: { hostname: "h1", added: 1, updated: 0, removed: 0, unchanged: 0, revision: 3 } } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
      const lines: Array<{ fields: Record<string, unknown>; msg: string }> = [];
      const log = { warn: (fields: Record<string, unknown>, msg: string) => lines.push({ fields, msg }), info() {}, debug() {}, error() {} } as unknown as Logger;
      const env = driverEnv({ hostname: "h1", drivers: "fake", sysfsRoot: "/sys", lspci: "lspci", pciWhitelist: "[]", nvidiaSkipVfs: false, vgpuTypes: "" });
      const summary = await reportOnce({ client: { url, token: "t" }, hostname: "h1", drivers: ["fake"], env, intervalMs: 1000, log, retries: 2, minRetryMs: 10 });
      expect(summary).toMatchObject({ added: 1 });
      expect(reports).toBe(2);
      expect(lines).toHaveLength(1);
      expect(lines[0]!.fields).toMatchObject({ retryAfterS: 1 });
      expect(lines[0]!.msg).toBe(`the service at ${url} is busy (the service is taking 16 host reports); sending the report again in 1 s`);
    } finally {
      server.close();
    }
  });
});

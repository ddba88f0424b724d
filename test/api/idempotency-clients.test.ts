/**
 * The agent and os-acc send idempotency keys: behind a proxy that loses the first answer of a
 * mutation (it forwards the request, then cuts the connection), their retry carries the same key,
 * is answered with the first answer, and nothing is written twice.
 */
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportOnce } from "../../src/clients/agent/agent.js";
import { createLogger } from "../../src/infra/logger.js";
import { OsAcc } from "../../src/clients/osacc/index.js";
import { fixtureEnv } from "../agent/drivers/fixture-env.js";
import { startTestService, TOKENS, type TestService } from "./harness.js";

/**
 * Forwards to `target` (HTTP, and WebSocket upgrades as they are); the first request whose body
 * matches `lose` is applied, but its answer is cut; requests matching `unknown` are refused as a
 * service without that operation refuses them (GRAPHQL_VALIDATION_FAILED), without reaching it.
 */
async function lossyProxy(target: string) {
  const seen: Array<{ operation: string; key: string | undefined }> = [];
  let lose: RegExp | null = null;
  let unknown: RegExp | null = null;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    const key = req.headers["idempotency-key"] as string | undefined;
    seen.push({ operation: /\b(reportHostInventory|confirmHostInventory|createAcceleratorRequests|bindAcceleratorRequests|createAndBindAcceleratorRequests)\b/.exec(body)?.[1] ?? "other", key });
    const operation = unknown?.exec(body)?.[0];
    if (operation) {
      const message = `Cannot query field "${operation}" on type "Mutation".`;
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ errors: [{ message, extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }] }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const h of ["content-type", "authorization", "idempotency-key"]) if (req.headers[h]) headers[h] = req.headers[h] as string;
    const answer = await fetch(target, { method: req.method, headers, body: req.method === "POST" ? body : undefined });
    const text = await answer.text();
    if (lose && lose.test(body)) {
      lose = null;
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" }).end(text);
  });
  server.on("upgrade", (req, socket, head) => {
    const to = new URL(target);
    const upstream = connect(Number(to.port), to.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${String(v)}`), "", ""];
      upstream.write(lines.join("\r\n"));
      upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    seen,
    loseNext: (operation: RegExp) => (lose = operation),
    unknown: (operation: RegExp | null) => (unknown = operation),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe("clients that send idempotency keys", () => {
  let t: TestService;
  let proxy: Awaited<ReturnType<typeof lossyProxy>>;
  beforeAll(async () => {
    t = await startTestService();
    proxy = await lossyProxy(t.url);
    await t.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.close();
  });

  it("the agent: a full report whose answer was lost is retried under its key and answered as first applied", async () => {
    // The digest confirmation, which would answer the retry on its own, is refused meanwhile as a
    // service from before it refuses it: the retry is the full report again.
    proxy.loseNext(/reportHostInventory/);
    proxy.unknown(/confirmHostInventory/);
    const summary = await reportOnce({
      client: { url: proxy.url, token: TOKENS.agent.token },
      hostname: "compute1",
      drivers: ["fake"],
      env: fixtureEnv("no-accelerators", { hostname: "compute1" }),
      intervalMs: 60_000,
      log: createLogger("silent"),
      retries: 3,
      minRetryMs: 10,
      lastGood: new Map(),
    });
    proxy.unknown(null);
    // The answer is the first attempt's (what it added), not a second application's (nothing changed).
    expect(summary.added).toBeGreaterThan(0);
    const reports = proxy.seen.filter((s) => s.operation === "reportHostInventory");
    expect(reports).toHaveLength(2);
    expect(reports[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(reports[1]!.key).toBe(reports[0]!.key);
  });

  it("os-acc: a plug whose answer was lost creates and binds the ARQs once", async () => {
    const acc = new OsAcc({ url: proxy.url, token: TOKENS.service.token, hostname: "compute1", bindTimeoutMs: 30_000 });
    try {
      const rp = (await t.ok("service", `{ resourceProviders(hostname: "compute1") { uuid } }`)).resourceProviders[0].uuid as string;
      const total = async () => (await t.ok("admin", `{ acceleratorRequests { totalCount } }`)).acceleratorRequests.totalCount as number;
      const before = await total();
      proxy.loseNext(/createAndBindAcceleratorRequests/);
      const attached = await acc.plug({ uuid: randomUUID(), name: "vm", project: "p1" }, { uuid: rp, hostname: "compute1" }, { "accel:device_profile": "fpga-1" });
      expect(attached).toHaveLength(1);
      expect(await total()).toBe(before + 1);
      const creates = proxy.seen.filter((s) => s.operation === "createAndBindAcceleratorRequests");
      expect(creates).toHaveLength(2);
      expect(creates[1]!.key).toBe(creates[0]!.key);
    } finally {
      await acc.close();
    }
  });
});

/**
 * One token cannot hold the server's sockets: WebSocket connections and subscriptions are capped
 * per token (typed refusals), exempt roles are not, and the rate limit covers /bitstreams too.
 */
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { collect, startTestService, TOKENS, type TestService, type Who } from "./harness.js";
import * as op from "./operations.js";

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ env: { WS_MAX_CONNECTIONS_PER_TOKEN: "2", WS_MAX_SUBSCRIPTIONS_PER_TOKEN: "2", RATE_LIMIT_REQUESTS: "0" } });
});
afterAll(() => t?.close());

/** A raw graphql-ws connection: resolves with "ack", or the close code and reason. */
function connect(who: Who): Promise<{ socket: WebSocket; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(t.url.replace(/^http/, "ws"), "graphql-transport-ws");
    socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${TOKENS[who].token}` } })));
    socket.on("message", (m) => {
      if (JSON.parse(String(m)).type === "connection_ack") resolve({ socket, answer: "ack" });
    });
    socket.on("close", (code, reason) => resolve({ socket, answer: `${code} ${String(reason)}` }));
    socket.on("error", reject);
  });
}

const closed = (s: WebSocket) => new Promise<void>((r) => (s.readyState === WebSocket.CLOSED ? r() : s.once("close", () => r())));

describe("per-token caps on WebSocket", () => {
  it("refuses a token's connection past the cap with 4429 and a reason, and takes one again once another closes", async () => {
    const first = await connect("reader");
    const second = await connect("reader");
    expect([first.answer, second.answer]).toEqual(["ack", "ack"]);
    const third = await connect("reader");
    expect(third.answer).toMatch(/^4429 TOO_MANY_CONNECTIONS: .*WS_MAX_CONNECTIONS_PER_TOKEN/);
    // Another token of the same project has its own count; an exempt role (service) has none.
    expect((await connect("member")).answer).toBe("ack");
    const service = await Promise.all([1, 2, 3].map(() => connect("service")));
    expect(service.map((c) => c.answer)).toEqual(["ack", "ack", "ack"]);
    first.socket.close();
    await closed(first.socket);
    expect((await connect("reader")).answer).toBe("ack");
    for (const c of [second, third, ...service]) c.socket.close();
  });

  it("refuses a token's subscription past the cap with TOO_MANY_SUBSCRIPTIONS, over all its connections, until one completes", async () => {
    // Two connections of one token: the cap counts over both.
    const [one, two] = [t.ws("member2"), t.ws("member2")];
    const a = collect(one, op.BOUND, { instance: randomUUID() });
    const b = collect(two, op.BOUND, { instance: randomUUID() });
    await expect.poll(() => t.service.notifications.listening).toBeGreaterThanOrEqual(2);
    const c = collect(two, op.BOUND, { instance: randomUUID() });
    await expect(c.next(1)).rejects.toThrow(/TOO_MANY_SUBSCRIPTIONS/);
    expect(JSON.stringify(c.errors)).toMatch(/WS_MAX_SUBSCRIPTIONS_PER_TOKEN/);
    a.unsubscribe();
    await expect.poll(() => t.service.notifications.listening).toBe(1);
    // The slot is free once the server has completed the subscription: a new one is then taken.
    let d = c;
    await expect
      .poll(
        async () => {
          d = collect(one, op.BOUND, { instance: randomUUID() });
          await expect.poll(() => d.errors.length > 0 || t.service.notifications.listening === 2, { timeout: 10_000 }).toBe(true);
          return JSON.stringify(d.errors);
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe("[]");
    expect(t.service.notifications.listening).toBe(2);
    b.unsubscribe();
    d.unsubscribe();
  });
});

describe("the rate limit", () => {
  it("covers /bitstreams: 429 with Retry-After past the limit", async () => {
    const limited = await startTestService({ env: { RATE_LIMIT_REQUESTS: "3", RATE_LIMIT_WINDOW_S: "60" } });
    onTestFinished(() => limited.close());
    const base = limited.url.replace(/\/graphql$/, "");
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${base}/bitstreams/${randomUUID()}/content`, { headers: { authorization: `Bearer ${TOKENS.manager.token}` } });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get("retry-after");
        expect(((await res.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe("RATE_LIMITED");
      } else await res.arrayBuffer();
    }
    expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
    expect(statuses.slice(3)).toEqual([429, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });
});

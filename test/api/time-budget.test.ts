/**
 * The per-request execution time budget (REQUEST_TIMEOUT_S): a query whose work outlives it stops
 * at its next field and answers TIMEOUT with HTTP 503 and Retry-After, over HTTP and WebSocket;
 * the process goes on answering others and its health checks. Subscriptions are not timed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "./harness.js";
import * as op from "./operations.js";

/** Every read of the API takes `ms` longer (the read store of a slow network). */
function slowed(store: ReadStore, slow: { ms: number }): ReadStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        if (slow.ms) await new Promise((r) => setTimeout(r, slow.ms));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const TREE = `{ devices { nodes { uuid deployables { uuid attachHandles { uuid } } } } }`;

describe("the per-request time budget", () => {
  let t: TestService;
  const slow = { ms: 0 };
  beforeAll(async () => {
    t = await startTestService({ env: { REQUEST_TIMEOUT_S: "1" }, overrides: { wrapReadStore: (s) => slowed(s, slow) } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
  });
  afterAll(() => t?.close());

  it("answers a query that fits its budget", async () => {
    slow.ms = 0;
    const data = await t.ok("admin", TREE);
    expect(data.devices.nodes[0].deployables[0].attachHandles).toHaveLength(2);
  });

  it("stops a query past its budget at its next field: TIMEOUT, 503, Retry-After; health answers meanwhile", async () => {
    // Each level of the tree reads once: the first level alone (1.2 s) outlives the 1 s budget.
    slow.ms = 1200;
    const pending = fetch(t.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.admin.token}` }, body: JSON.stringify({ query: TREE }) });
    expect((await fetch(new URL("/healthz", t.url))).status).toBe(200);
    const res = await pending;
    const body = (await res.json()) as { errors?: Array<{ message: string; extensions?: { code?: string } }> };
    slow.ms = 0;
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(body.errors?.[0]?.extensions?.code).toBe("TIMEOUT");
    expect(body.errors?.[0]?.message).toMatch(/time budget of 1 s \(REQUEST_TIMEOUT_S\)/);
  });

  it("holds over WebSocket too", async () => {
    slow.ms = 1200;
    const client = t.ws("admin");
    const result = await new Promise<{ errors?: Array<{ extensions?: { code?: string } }> }>((resolve, reject) => {
      let r = {};
      client.subscribe({ query: TREE }, { next: (v) => (r = v), error: reject, complete: () => resolve(r) });
    });
    slow.ms = 0;
    expect(result.errors?.[0]?.extensions?.code).toBe("TIMEOUT");
  });
});

/**
 * The common GraphQL POST runs without Apollo's pipeline (src/api/graphql/direct-operation.ts) and
 * answers what Apollo answers: the same requests, sent to a service that runs them directly and to
 * one that sends every request through Apollo, get the same status, content type, Retry-After and
 * body (uuids and times aside). Which requests the direct path takes, and which it leaves to
 * Apollo, is checked on the function itself.
 */
import { buildSchema, type GraphQLFormattedError } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentCache } from "../../src/api/graphql/document-cache.js";
import { directOperation } from "../../src/api/graphql/direct-operation.js";
import type { ApiContext } from "../../src/api/graphql/context.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { ReadStoreUnavailableError } from "../../src/infra/readstore/port.js";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "./harness.js";
import * as op from "./operations.js";

/** Every read of the API's read store refused while `down.on` (a model being rebuilt). */
function failing(store: ReadStore, down: { on: boolean }): ReadStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (down.on) throw new ReadStoreUnavailableError(["arqs"], "rebuilding");
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;

interface Sent {
  who?: keyof typeof TOKENS;
  body: unknown;
  headers?: Record<string, string>;
}

describe("GraphQL POSTs run directly answer as Apollo does", () => {
  let direct: TestService;
  let apollo: TestService;
  const down = { on: false };

  beforeAll(async () => {
    [direct, apollo] = await Promise.all([
      startTestService({ overrides: { wrapReadStore: (s) => failing(s, down) } }),
      startTestService({ overrides: { wrapReadStore: (s) => failing(s, down), apolloOnly: true } }),
    ]);
    for (const t of [direct, apollo]) {
      await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(4) });
      await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga", groups: [{ "resources:FPGA": "1" }] } });
    }
  }, 90_000);
  afterAll(async () => {
    await direct?.close();
    await apollo?.close();
  });

  async function send(t: TestService, s: Sent) {
    const headers: Record<string, string> = { "content-type": "application/json", ...s.headers };
    if (s.who) headers.authorization = `Bearer ${TOKENS[s.who].token}`;
    const r = await fetch(t.url, { method: "POST", headers, body: typeof s.body === "string" ? s.body : JSON.stringify(s.body) });
    const text = (await r.text()).replace(UUID, "<uuid>").replace(TIME, "<time>");
    return { status: r.status, type: r.headers.get("content-type"), retryAfter: r.headers.get("retry-after"), text };
  }

  /** Sends `s` to both services; expects the same answer, and returns it. */
  async function same(s: Sent) {
    const [a, b] = [await send(direct, s), await send(apollo, s)];
    expect(a).toEqual(b);
    return a;
  }

  it("a query and a mutation that succeed", async () => {
    const q = await same({ who: "admin", body: { query: `{ deviceProfiles { name groups } }` } });
    expect(q).toMatchObject({ status: 200, type: "application/json; charset=utf-8" });
    expect(JSON.parse(q.text)).toEqual({ data: { deviceProfiles: [{ name: "fpga", groups: [{ "resources:FPGA": "1" }] }] } });
    const m = await same({ who: "admin", body: { query: op.CREATE_PROFILE, variables: { input: { name: "second", groups: [{ "resources:FPGA": "1" }] } } } });
    expect(JSON.parse(m.text).data.createDeviceProfile.name).toBe("second");
  });

  it("warnings beside the data", async () => {
    const r = await same({ who: "admin", body: { query: op.CREATE_PROFILE, variables: { input: { name: "t4", groups: [{ "resources:PGPU": "1", "trait:CUSTOM_NVIDIA_T4": "required" }] } } } });
    expect(JSON.parse(r.text).extensions.warnings.length).toBeGreaterThan(0);
  });

  it("errors of the application: CONFLICT, FORBIDDEN, UNAUTHENTICATED, one in a field's path", async () => {
    const conflict = await same({ who: "admin", body: { query: op.CREATE_PROFILE, variables: { input: { name: "fpga", groups: [{ "resources:FPGA": "1" }] } } } });
    expect(JSON.parse(conflict.text).errors[0].extensions.code).toBe("CONFLICT");
    const forbidden = await same({ who: "agent", body: { query: op.CREATE_PROFILE, variables: { input: { name: "x", groups: [{ "resources:FPGA": "1" }] } } } });
    expect(JSON.parse(forbidden.text).errors[0].extensions.code).toBe("FORBIDDEN");
    const anonymous = await same({ body: { query: `{ deviceProfiles { name } }` } });
    expect(JSON.parse(anonymous.text).errors[0].extensions.code).toBe("UNAUTHENTICATED");
    const inPath = await same({ who: "member", body: { query: `{ deviceProfiles { name } projectQuota(projectId: "p2") { projectId } }` } });
    // projectQuota is not nullable: the error in its path makes data null.
    expect(JSON.parse(inPath.text)).toMatchObject({ data: null, errors: [{ path: ["projectQuota"], locations: [expect.any(Object)], extensions: { code: "FORBIDDEN" } }] });
  });

  it("a read model that cannot answer: 503 with Retry-After", async () => {
    down.on = true;
    try {
      const r = await same({ who: "admin", body: { query: `{ deviceProfiles { name } }` } });
      expect(r).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^\d+$/) });
      expect(JSON.parse(r.text).errors[0].extensions.code).toBe("UNAVAILABLE");
    } finally {
      down.on = false;
    }
  });

  it("what Apollo answers before any resolver runs: variables that do not coerce, validation, guards, subscriptions, other media types", async () => {
    const coercion = await same({ who: "admin", body: { query: op.CREATE_PROFILE, variables: { input: { name: 5 } } } });
    expect(coercion.status).toBe(400);
    expect((await same({ who: "admin", body: { query: `{ noSuchField }` } })).status).toBe(400);
    expect((await same({ who: "admin", body: { query: `{ a: deviceProfiles { name } } query B { deviceProfiles { name } }` } })).status).toBe(400);
    const deep = `{ devices { nodes { deployables { device { deployables { device { deployables { device { deployables { device { uuid } } } } } } } } } } }`;
    expect(JSON.parse((await same({ who: "admin", body: { query: deep } })).text).errors[0].extensions.code).toMatch(/QUERY_TOO_COMPLEX|GRAPHQL_VALIDATION_FAILED/);
    expect((await same({ who: "service", body: { query: `subscription { acceleratorRequestBound(arqUuids: []) { arqUuid } }` } })).status).toBe(400);
    const typed = await same({ who: "admin", body: { query: `{ deviceProfiles { name } }` }, headers: { accept: "application/graphql-response+json" } });
    expect(typed.type).toBe("application/graphql-response+json; charset=utf-8");
    expect((await same({ who: "admin", body: "[]" })).status).toBe(400);
    expect((await same({ who: "admin", body: { query: `query A { deviceProfiles { name } } query B { deviceProfiles { uuid } }`, operationName: "B" } })).status).toBe(200);
  });
});

describe("directOperation: what it takes, and what it leaves to Apollo", () => {
  const schema = buildSchema(`type Query { hello(name: String!): String }  type Subscription { tick: Int }`);
  const documents = new DocumentCache(schema);
  const observed: string[] = [];
  const d = {
    schema,
    documents,
    format: (f: GraphQLFormattedError) => f,
    observe: () => ({ resolved: () => observed.push("resolved"), erred: () => observed.push("erred"), sent: () => observed.push("sent") }),
  };
  const ctx = () => ({ correlationId: "c" }) as ApiContext;
  const take = (body: unknown, contentType: string | undefined = "application/json", accept?: string) => directOperation(d, { contentType, accept, body }, ctx);
  const untyped = (body: unknown) => directOperation(d, { contentType: undefined, accept: undefined, body }, ctx);
  const hello = { query: `query($n: String!) { hello(name: $n) }`, variables: { n: "x" } };

  it("takes a JSON POST of a query that parses, validates and coerces", async () => {
    for (const accept of [undefined, "*/*", "application/json", "application/json, */*"]) {
      expect(await take(hello, "application/json; charset=utf-8", accept)).toEqual({ status: 200, headers: [["content-type", "application/json; charset=utf-8"]], body: `{"data":{"hello":null}}\n` });
    }
    expect(observed.slice(0, 2)).toEqual(["resolved", "sent"]);
  });

  it("leaves the rest to Apollo", async () => {
    expect(await take(hello, "text/plain")).toBeUndefined();
    expect(await untyped(hello)).toBeUndefined();
    expect(await take(hello, "application/json", "application/graphql-response+json")).toBeUndefined();
    expect(await take(hello, "application/json", "application/json;q=0.5, */*")).toBeUndefined();
    expect(await take([hello])).toBeUndefined();
    expect(await take({ ...hello, extensions: { persistedQuery: { version: 1, sha256Hash: "x" } } })).toBeUndefined();
    expect(await take({ ...hello, variables: "{}" })).toBeUndefined();
    expect(await take({ ...hello, operationName: 5 })).toBeUndefined();
    expect(await take({ query: `{ nope }` })).toBeUndefined();
    expect(await take({ query: `{ hello(` })).toBeUndefined();
    expect(await take({ query: `subscription { tick }` })).toBeUndefined();
    expect(await take({ query: `query A { hello(name: "a") } query B { hello(name: "b") }` })).toBeUndefined();
    expect(await take({ ...hello, variables: { n: 5 } })).toBeUndefined();
    expect(await take({ ...hello, variables: {} })).toBeUndefined();
  });
});

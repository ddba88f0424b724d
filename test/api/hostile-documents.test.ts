/**
 * Documents built to cost the server: every guard refuses them before any resolver runs, with
 * QUERY_TOO_COMPLEX and HTTP 400, over HTTP and WebSocket alike; what GraphiQL and codegen send
 * (the standard introspection query) passes.
 */
import { getIntrospectionQuery } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GUARDS } from "../../src/api/graphql/guards.js";
import { collect, startTestService, TOKENS, type TestService } from "./harness.js";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t?.close());

async function post(query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(t.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.reader.token}` },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> } };
}

const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: deviceProfiles { uuid name groups }`).join(" ")} }`;

describe("hostile documents", () => {
  it("the standard introspection query passes (GraphiQL, codegen)", async () => {
    for (const q of [getIntrospectionQuery(), getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true })]) {
      const r = await post(q);
      expect(r.status).toBe(200);
      expect(r.body.errors).toBeUndefined();
    }
  });

  it("refuses 20,000 aliases of a list (under 1 MB) at once, without running them", async () => {
    const q = aliases(20_000);
    expect(q.length).toBeLessThan(1_048_576);
    const r = await post(q);
    expect(r.status).toBe(400);
    expect(r.body.errors?.[0]?.extensions?.code).toBe("QUERY_TOO_COMPLEX");
    // A few fields can cost as much: pages of lists of lists, every alias counted.
    const pages = Array.from({ length: 3 }, (_, i) => `p${i}: devices(first: 1000) { nodes { uuid deployables { uuid attachHandles { uuid } } } }`).join(" ");
    const costly = await post(`{ ${pages} }`);
    expect([costly.status, costly.body.errors?.[0]?.extensions?.code]).toEqual([400, "QUERY_TOO_COMPLEX"]);
    expect(costly.body.errors?.[0]?.message).toMatch(/complexity/);
  });

  it("refuses a query with too many tokens, or too long, before parsing it all", async () => {
    const tokens = await post(`{ deviceProfiles { ${"uuid ".repeat(DEFAULT_GUARDS.maxTokens)} } }`);
    expect([tokens.status, tokens.body.errors?.[0]?.extensions?.code]).toEqual([400, "QUERY_TOO_COMPLEX"]);
    const long = await post(`{ deviceProfiles { uuid } } # ${"x".repeat(DEFAULT_GUARDS.maxQueryChars)}`);
    expect([long.status, long.body.errors?.[0]?.extensions?.code]).toEqual([400, "QUERY_TOO_COMPLEX"]);
  });

  it("counts fragments as what they expand to: a fragment bomb is refused, and counted in no time", async () => {
    const levels = 30;
    const frags = Array.from({ length: levels }, (_, i) => `fragment F${i} on DeviceProfile { ${i + 1 < levels ? `...F${i + 1} ...F${i + 1}` : "uuid name"} }`).join(" ");
    const started = Date.now();
    const r = await post(`{ deviceProfiles { ...F0 } } ${frags}`);
    expect([r.status, r.body.errors?.[0]?.extensions?.code]).toEqual([400, "QUERY_TOO_COMPLEX"]);
    expect(r.body.errors?.[0]?.message).toMatch(/fields/);
    expect(Date.now() - started).toBeLessThan(15_000); // 2^30 expansions would never end
  });

  it("refuses the same over WebSocket, with the error's code", async () => {
    const sub = collect(t.ws("reader"), `{ ${Array.from({ length: 3000 }, (_, i) => `a${i}: __typename`).join(" ")} }`);
    await expect(sub.next(1, 10_000)).rejects.toThrow(/QUERY_TOO_COMPLEX/);
  });
});

describe("hostile inputs get typed errors naming the field", () => {
  const post = async (who: keyof typeof TOKENS, query: string, variables: Record<string, unknown> | string) => {
    const body = typeof variables === "string" ? `{"query":${JSON.stringify(query)},"variables":${variables}}` : JSON.stringify({ query, variables });
    const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS[who].token}` }, body });
    const json = (await res.json()) as { errors?: Array<{ extensions?: { code?: string; field?: string } }> };
    return { status: res.status, code: json.errors?.[0]?.extensions?.code, field: json.errors?.[0]?.extensions?.field };
  };
  it("a malformed cursor on any connection", async () => {
    for (const after of ["", "xyz", "MQ==", "-1"]) {
      for (const q of [`query($a: String) { devices(after: $a) { totalCount } }`, `query($a: String) { deployables(after: $a) { totalCount } }`, `query($a: String) { acceleratorRequests(after: $a) { totalCount } }`]) {
        expect(await post("admin", q, { a: after })).toMatchObject({ code: "BAD_USER_INPUT", field: "after" });
      }
    }
  });
  it("a subscription sent over HTTP", async () => {
    expect(await post("service", `subscription { acceleratorRequestBound { tag } }`, {})).toEqual({ status: 400, code: "BAD_REQUEST", field: undefined });
  });
  it("names too long to be a key of the log", async () => {
    expect(await post("service", `mutation($n: String!) { createAcceleratorRequests(deviceProfileName: $n) { uuid } }`, { n: "a".repeat(100_000) })).toMatchObject({ code: "BAD_USER_INPUT", field: "deviceProfileName" });
    expect(await post("admin", `mutation($n: [String!]) { deleteDeviceProfiles(names: $n) }`, { n: ["a".repeat(100_000)] })).toMatchObject({ code: "BAD_USER_INPUT", field: "names[0]" });
    expect(await post("service", `mutation($a: [ID!]!) { unbindAcceleratorRequests(arqUuids: $a) { uuid } }`, { a: ["a".repeat(300)] })).toMatchObject({ code: "BAD_USER_INPUT", field: "arqUuids[0]" });
  });
  it("a profile with too many groups, or a group nested thousands of levels deep", async () => {
    const many = { input: { name: "many", groups: Array.from({ length: 20_000 }, () => ({ "resources:FPGA": "1" })) } };
    expect(await post("admin", `mutation($input: DeviceProfileInput!) { createDeviceProfile(input: $input) { uuid } }`, many)).toMatchObject({ code: "BAD_USER_INPUT", field: "groups" });
    const deep = `{"input":{"name":"deep","groups":[{"resources:FPGA":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}]}}`;
    expect(await post("admin", `mutation($input: DeviceProfileInput!) { createDeviceProfile(input: $input) { uuid } }`, deep)).toMatchObject({ code: "BAD_USER_INPUT" });
  });
  it("a bind to a resource provider that is not a uuid", async () => {
    const b = [{ arqUuid: "a1", hostname: "compute1", deviceRpUuid: "x", instanceUuid: "vm-1" }];
    expect(await post("service", `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid } }`, { b })).toMatchObject({ code: "BAD_USER_INPUT", field: "bindings[0].deviceRpUuid" });
  });
});

describe("nesting", () => {
  it("a literal nested thousands of levels deep in the query text is refused before parsing", async () => {
    const lit = "{a:".repeat(4000) + "1" + "}".repeat(4000);
    const res = await fetch(t.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.admin.token}` },
      body: JSON.stringify({ query: `mutation { createDeviceProfile(input: { name: "deep", groups: [${lit}] }) { uuid } }` }),
    });
    const body = (await res.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect([res.status, body.errors[0]!.extensions.code]).toEqual([400, "QUERY_TOO_COMPLEX"]);
    expect(body.errors[0]!.message).toMatch(/nests more than 64/);
  });
});

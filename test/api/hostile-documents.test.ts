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

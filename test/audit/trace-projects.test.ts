/**
 * A correlation id is the caller's to choose, so another project can send one already used: the
 * id is kept as given, and a trace is one project's, never mixing the other's events in.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, TOKENS, type TestService, type Who } from "../api/harness.js";
import * as op from "../api/operations.js";

const TRACE = `query($id: String!, $project: String) { trace(correlationId: $id, project: $project) {
  totalCount nodes { type principal correlationId project data } } }`;
const SHARED = "shared-request-1";

let t: TestService;

/** A mutation sent with a correlation id of the caller's choosing. */
async function send(who: Who, query: string, variables: Record<string, unknown>) {
  const res = await fetch(t.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS[who].token}`, "x-correlation-id": SHARED },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { errors?: unknown };
  expect(body.errors).toBeUndefined();
}

beforeAll(async () => {
  t = await startTestService();
  await t.ok("admin", op.CREATE_PROFILE, { input: { name: "one-fpga", groups: [{ "resources:FPGA": "1" }] } });
  // First project p1's member, then p2's member reusing the same correlation id.
  await send("member", op.CREATE_ARQS, { name: "one-fpga" });
  await send("member2", op.CREATE_ARQS, { name: "one-fpga" });
});
afterAll(() => t?.close());

describe("trace, when two projects send one correlation id", () => {
  type Node = { principal: string; correlationId: string; project: string | null };

  it("is the first project's by default, with none of the other's events", async () => {
    const nodes = (await t.ok("admin", TRACE, { id: SHARED })).trace.nodes as Node[];
    expect(nodes.length).toBeGreaterThan(0);
    expect(new Set(nodes.map((n) => n.project))).toEqual(new Set(["p1"]));
    expect(new Set(nodes.map((n) => n.principal))).toEqual(new Set(["member"]));
    // The id is kept as each caller sent it.
    expect(nodes.every((n) => n.correlationId === SHARED)).toBe(true);
  });

  it("gives the other project's request when asked for its project", async () => {
    const nodes = (await t.ok("admin", TRACE, { id: SHARED, project: "p2" })).trace.nodes as Node[];
    expect(nodes.length).toBeGreaterThan(0);
    expect(new Set(nodes.map((n) => `${n.project} ${n.principal}`))).toEqual(new Set(["p2 member2"]));
  });

  it("gives nothing for a project that did not send it", async () => {
    expect((await t.ok("admin", TRACE, { id: SHARED, project: "p-none" })).trace.nodes).toEqual([]);
  });
});

/** The reliability suite's own judges: each check catches what it exists to catch (and passes what is fine). */
import { describe, expect, it } from "vitest";
import { checkGraphqlHttp, checkGraphqlWs, checkRest, looksLikeStack } from "../../bench/lib/reliability/answer-checks.js";
import { checkLedger, doubleAllocations } from "../../bench/lib/reliability/kill9-rounds.js";
import { deepLiteral, expandDeep, deepJson } from "../../bench/lib/reliability/hostile-values.js";
import { judgeGraphql, judgeRest } from "../../bench/lib/reliability/read-store-answers.js";

const http = (status: number, body: unknown) => ({ status, headers: new Headers(), text: typeof body === "string" ? body : JSON.stringify(body) });
const envelope = (fault: Record<string, unknown>) => ({ error_message: JSON.stringify({ faultcode: "Client", faultstring: "no", debuginfo: null, ...fault }) });

describe("answer checks", () => {
  it("GraphQL: an internal error, a missing code, stack text and a 5xx are caught; typed errors pass", () => {
    expect(checkGraphqlHttp(http(200, { errors: [{ message: "no", extensions: { code: "BAD_USER_INPUT" } }] }))).toEqual([]);
    expect(checkGraphqlHttp(http(200, { errors: [{ message: "x", extensions: { code: "INTERNAL_SERVER_ERROR" } }] })).map((v) => v.kind)).toEqual(["internal"]);
    expect(checkGraphqlHttp(http(200, { errors: [{ message: "x" }] })).map((v) => v.kind)).toEqual(["no-code"]);
    expect(checkGraphqlHttp(http(400, { errors: [{ message: "TypeError: x\n    at f (/app/src/a.ts:3:9)", extensions: { code: "BAD_USER_INPUT" } }] })).map((v) => v.kind)).toEqual(["stack"]);
    expect(checkGraphqlHttp(http(502, "Bad Gateway")).map((v) => v.kind)).toEqual(["status", "not-json"]);
  });

  it("WebSocket: a close for an internal error is caught, the protocol's refusals are not; a subscription may wait", () => {
    expect(checkGraphqlWs({ nexts: [], error: { code: 4500, reason: "boom" }, completed: false, open: false }, false).map((v) => v.kind)).toEqual(["socket"]);
    expect(checkGraphqlWs({ nexts: [], error: { code: 4403, reason: "Forbidden" }, completed: false, open: false }, false)).toEqual([]);
    expect(checkGraphqlWs({ nexts: [], completed: false, open: true }, true)).toEqual([]);
    expect(checkGraphqlWs({ nexts: [], completed: false, open: true }, false).map((v) => v.kind)).toEqual(["no-answer"]);
  });

  it("REST: a 5xx, an error outside the envelope or without a code is caught; the deliberate 501 passes", () => {
    expect(checkRest("GET", http(404, envelope({ code: "NOT_FOUND" })))).toEqual([]);
    expect(checkRest("PATCH", http(501, envelope({ code: "NOT_IMPLEMENTED", faultcode: "Server" })))).toEqual([]);
    expect(checkRest("GET", http(500, envelope({ code: "INTERNAL_SERVER_ERROR", faultcode: "Server" }))).map((v) => v.kind)).toEqual(["status", "internal"]);
    expect(checkRest("GET", http(404, { error: "no route" })).map((v) => v.kind)).toEqual(["envelope"]);
    expect(checkRest("GET", http(400, envelope({}))).map((v) => v.kind)).toEqual(["envelope"]);
  });

  it("stack text: frames and source paths, not ordinary messages", () => {
    expect(looksLikeStack("Error: x\n    at Object.<anonymous> (file:///app/dist/src/main.js:10:5)")).toBe(true);
    expect(looksLikeStack("cannot read /work/src/api/rest/router.ts")).toBe(true);
    expect(looksLikeStack("at most 100 bindings per mutation (got 101)")).toBe(false);
    expect(looksLikeStack("hostname \"compute1\" is not a valid host name")).toBe(false);
  });

  it("deep JSON is written out as text, never built as a value", () => {
    expect(expandDeep(JSON.stringify({ v: deepJson(3, false) }))).toBe('{"v":{"k": {"k": {"k": "leaf"}}}}');
    expect(JSON.parse(expandDeep(JSON.stringify([deepJson(2, true)])))).toEqual([[["leaf"]]]);
    expect(deepLiteral(deepJson(2, false))).toBe('{k: {k: "leaf"}}');
  });
});

describe("read store loss checks", () => {
  const retryAfter = new Headers({ "retry-after": "1" });
  const unavailable = { errors: [{ extensions: { code: "UNAVAILABLE" } }] };
  const hasTwo = (d: { names: string[] }) => d.names.length === 2;

  it("GraphQL: an empty answer, a 503 without Retry-After or another code are wrong; UNAVAILABLE and the truth pass", () => {
    expect(judgeGraphql(200, new Headers(), { data: { names: ["a", "b"] } }, hasTwo)).toBe("whole");
    expect(judgeGraphql(503, retryAfter, unavailable, hasTwo)).toBe("unavailable");
    expect(judgeGraphql(200, new Headers(), { data: { names: [] } }, hasTwo)).toBe("wrong");
    expect(judgeGraphql(503, new Headers(), unavailable, hasTwo)).toBe("wrong");
    expect(judgeGraphql(200, retryAfter, unavailable, hasTwo)).toBe("wrong");
    expect(judgeGraphql(200, new Headers(), { errors: [{ extensions: { code: "NOT_FOUND" } }] }, hasTwo)).toBe("wrong");
    expect(judgeGraphql(503, retryAfter, { errors: [...unavailable.errors, { extensions: { code: "INTERNAL_SERVER_ERROR" } }] }, hasTwo)).toBe("wrong");
  });

  it("REST: the same, in Cyborg's error envelope", () => {
    const names = (b: { device_profiles: unknown[] }) => b.device_profiles.length === 2;
    expect(judgeRest(200, new Headers(), { device_profiles: [{}, {}] } as never, names)).toBe("whole");
    expect(judgeRest(200, new Headers(), { device_profiles: [] } as never, names)).toBe("wrong");
    expect(judgeRest(503, retryAfter, envelope({ code: "UNAVAILABLE", faultcode: "Server" }), names)).toBe("unavailable");
    expect(judgeRest(503, new Headers(), envelope({ code: "UNAVAILABLE", faultcode: "Server" }), names)).toBe("wrong");
    expect(judgeRest(404, retryAfter, envelope({ code: "NOT_FOUND" }), names)).toBe("wrong");
    expect(judgeRest(503, retryAfter, { error_message: "not json" }, names)).toBe("wrong");
  });
});

describe("crash checks", () => {
  const row = (uuid: string, state: string, instanceUuid: string | null = null, attachHandleUuid: string | null = null) => ({ uuid, state, instanceUuid, attachHandleUuid });

  it("a lost creation, a lost bind and an undone delete are each caught; unanswered writes are not judged", () => {
    const ledger = new Map([
      ["kept", {}],
      ["lost", {}],
      ["bound", { bindSent: true, boundTo: "i1" }],
      ["rebound", { bindSent: true, boundTo: "i2" }],
      ["deleted", { deleteSent: true, deleted: true }],
      ["maybe", { deleteSent: true }],
    ]);
    const problems = checkLedger(ledger, [row("kept", "INITIAL"), row("bound", "BOUND", "i1"), row("rebound", "INITIAL"), row("deleted", "BOUND", "i9")]);
    expect(problems).toHaveLength(3);
    expect(problems.join("\n")).toMatch(/lost.*gone[\s\S]*rebound.*i2[\s\S]*deleted.*back/);
  });

  it("a handle held by two BOUND ARQs is caught", () => {
    expect(doubleAllocations([row("a", "BOUND", "i1", "h1"), row("b", "BOUND", "i2", "h1"), row("c", "BIND_FAILED", "i3", null)])).toHaveLength(1);
    expect(doubleAllocations([row("a", "BOUND", "i1", "h1"), row("b", "BOUND", "i2", "h2")])).toEqual([]);
  });
});

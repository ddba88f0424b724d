/**
 * Idempotency keys through every front door: GraphQL over HTTP (the Idempotency-Key header or
 * extensions.idempotencyKey), over WebSocket (extensions.idempotencyKey), and REST (the header).
 * A retry gets the first answer and the log does not grow; a key reused for another request is a
 * CONFLICT on the field idempotencyKey.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restClient } from "../rest/support.js";
import { startTestService, TOKENS, type GqlResult, type TestService, type Who } from "./harness.js";
import * as op from "./operations.js";

describe("idempotency keys over the API", () => {
  let t: TestService;
  let rest: ReturnType<typeof restClient>;
  beforeAll(async () => {
    t = await startTestService();
    rest = restClient(t.url);
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga", groups: [{ "resources:FPGA": "1" }] } });
  });
  afterAll(() => t?.close());

  const logLength = async () => (await t.service.store.readAll()).length;
  const post = async (who: Who, body: Record<string, unknown>, key?: string): Promise<GqlResult> => {
    const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${TOKENS[who].token}` };
    if (key !== undefined) headers["idempotency-key"] = key;
    return (await (await fetch(t.url, { method: "POST", headers, body: JSON.stringify(body) })).json()) as GqlResult;
  };
  const createArqs = { query: op.CREATE_ARQS, variables: { name: "fpga" } };

  it("GraphQL over HTTP: the header makes a retry answer the same ARQs and write nothing", async () => {
    const first = await post("member", createArqs, "gql-header-1");
    expect(first.errors).toBeUndefined();
    const before = await logLength();
    const again = await post("member", createArqs, "gql-header-1");
    expect(again).toEqual(first);
    expect(await logLength()).toBe(before);
    // Without a key, the same mutation makes new ARQs.
    const unkeyed = await post("member", createArqs);
    expect(unkeyed.data.createAcceleratorRequests[0].uuid).not.toBe(first.data.createAcceleratorRequests[0].uuid);
  });

  it("GraphQL over HTTP: extensions.idempotencyKey in the body does the same", async () => {
    const body = { ...createArqs, extensions: { idempotencyKey: "gql-body-1" } };
    const first = await post("member", body);
    const before = await logLength();
    expect(await post("member", body)).toEqual(first);
    expect(await logLength()).toBe(before);
  });

  it("refuses the key for another request, two mutations under one key, and a malformed key", async () => {
    await post("member", createArqs, "gql-reuse");
    const other = await post("member", { query: op.CREATE_ARQS, variables: { name: "fpga", group: 0 } }, "gql-reuse");
    expect(other.errors?.[0]?.extensions).toMatchObject({ code: "CONFLICT", field: "idempotencyKey" });
    const two = await post("member", { query: `mutation { a: createAcceleratorRequests(deviceProfileName: "fpga") { uuid } b: createAcceleratorRequests(deviceProfileName: "fpga") { uuid } }` }, "gql-two");
    expect(two.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "idempotencyKey" });
    const before = await logLength();
    const bad = await post("member", createArqs, "has space");
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "idempotencyKey" });
    expect(await logLength()).toBe(before);
  });

  it("a forbidden keyed request writes nothing", async () => {
    const before = await logLength();
    const refused = await post("reader", createArqs, "reader-key");
    expect(refused.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(await logLength()).toBe(before);
  });

  it("GraphQL over WebSocket: extensions.idempotencyKey", async () => {
    const client = t.ws("member");
    const run = () =>
      new Promise<GqlResult>((resolve, reject) => {
        let result: GqlResult = {};
        client.subscribe({ ...createArqs, extensions: { idempotencyKey: "ws-1" } }, { next: (v) => (result = v as GqlResult), error: reject, complete: () => resolve(result) });
      });
    const first = await run();
    expect(first.errors).toBeUndefined();
    const before = await logLength();
    expect(await run()).toEqual(first);
    expect(await logLength()).toBe(before);
  });

  it("REST: a POST with Idempotency-Key answers a retry with the same status and body", async () => {
    const headers = { "idempotency-key": "rest-1" };
    const first = await rest.call("member", "POST", "/v2/accelerator_requests", { body: { device_profile_name: "fpga" }, headers });
    expect(first.status).toBe(201);
    const before = await logLength();
    const again = await rest.call("member", "POST", "/v2/accelerator_requests", { body: { device_profile_name: "fpga" }, headers });
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(await logLength()).toBe(before);
    const other = await rest.call("member", "POST", "/v2/accelerator_requests", { body: { device_profile_name: "other" }, headers });
    expect(other.status).toBe(409);
    expect(other.fault).toMatchObject({ code: "CONFLICT", field: "idempotencyKey" });
    // A keyed DELETE converges too: retried, it answers as the first did.
    const uuid = first.json.arqs[0].uuid as string;
    const del = { headers: { "idempotency-key": "rest-del-1" } };
    const d1 = await rest.call("member", "DELETE", `/v2/accelerator_requests?arqs=${uuid}`, del);
    const d2 = await rest.call("member", "DELETE", `/v2/accelerator_requests?arqs=${uuid}`, del);
    expect([d1.status, d2.status]).toEqual([204, 204]);
    expect((await rest.call("member", "DELETE", `/v2/accelerator_requests?arqs=${uuid}`)).status).toBe(404);
  });
});

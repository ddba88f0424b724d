/**
 * Accelerator requests over REST: create, list and show with project isolation, PATCH bind and
 * unbind with Cyborg's service-token rules, delete by uuids and by instance, bind_state=resolved
 * (423 while a bind is under way), and one core for both front doors (a REST bind reaches a
 * GraphQL subscriber; a GraphQL bind reads back over REST).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, FAKE_HOST_DEVICES, startTestService, type TestService, type Who } from "../api/harness.js";
import * as op from "../api/operations.js";
import { bindPatch, restClient, unbindPatch, type RestResponse } from "./support.js";

function expectFault(r: RestResponse, status: number, code: string, message?: RegExp) {
  expect(r.status, r.text).toBe(status);
  expect(r.fault).toMatchObject({ code });
  if (message) expect(r.fault!.faultstring).toMatch(message);
}

async function setUp(t: TestService, handles = 8) {
  await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] } });
  await t.ok("admin", op.CREATE_PROFILE, { input: { name: "two-groups", groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }] } });
  await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(handles) });
  return (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid as string;
}

describe("accelerator requests", () => {
  let t: TestService;
  let rest: ReturnType<typeof restClient>;
  let rp: string;
  const call = (...args: Parameters<ReturnType<typeof restClient>["call"]>) => rest.call(...args);
  const create = async (who: Who, name = "fpga") => {
    const r = await call(who, "POST", "/v2/accelerator_requests", { body: { device_profile_name: name } });
    expect(r.status, r.text).toBe(201);
    return r.json.arqs as any[];
  };
  const bind = (uuids: string[], instance: string, who: Who = "service") =>
    call(who, "PATCH", "/v2/accelerator_requests", { body: bindPatch(uuids, { hostname: "compute1", rp, instance }) });

  beforeAll(async () => {
    t = await startTestService();
    rest = restClient(t.url);
    rp = await setUp(t);
  });
  afterAll(() => t?.close());

  it("creates one ARQ per accelerator of the profile, in Initial, owned by the caller's project", async () => {
    const arqs = await create("member", "two-groups");
    expect(arqs.map((a) => [a.device_profile_group_id, a.state, a.project_id])).toEqual([
      [0, "Initial", "p1"],
      [1, "Initial", "p1"],
    ]);
    expect(arqs[0]).toMatchObject({ device_profile_name: "two-groups", hostname: null, device_rp_uuid: null, instance_uuid: null, attach_handle_type: "", attach_handle_uuid: null, attach_handle_info: {}, updated_at: null });
    expect(arqs[0].links[0].href).toBe(`${rest.base}/accelerator/v2/accelerator_requests/${arqs[0].uuid}`);
    const one = await call("member", "POST", "/v2/accelerator_requests", { body: { device_profile_name: "two-groups", device_profile_group_id: 1 } });
    expect(one.json.arqs.map((a: any) => a.device_profile_group_id)).toEqual([1]);
    await call("member", "DELETE", `/v2/accelerator_requests?arqs=${[...arqs, ...one.json.arqs].map((a) => a.uuid).join(",")}`);
  });

  it("answers 4xx for bad creations (Cyborg: 500 for a missing name)", async () => {
    const post = (body: unknown) => call("member", "POST", "/v2/accelerator_requests", { body });
    expectFault(await post({}), 400, "BAD_USER_INPUT", /device_profile_name is required/);
    expectFault(await post({ device_profile_name: 7 }), 400, "BAD_USER_INPUT");
    expectFault(await post({ device_profile_name: "" }), 404, "NOT_FOUND");
    expectFault(await post({ device_profile_name: "!@#$%^&*()=-[]" }), 404, "NOT_FOUND", /Device Profile not found/);
    expectFault(await post({ device_profile_name: "two-groups", device_profile_group_id: 5 }), 400, "BAD_USER_INPUT", /out of range/);
    expectFault(await call("reader", "POST", "/v2/accelerator_requests", { body: { device_profile_name: "fpga" } }), 403, "FORBIDDEN", /arq:create/);
  });

  it("shows and lists a project's ARQs to that project, admins and the service only", async () => {
    const [arq] = await create("member");
    expect((await call("reader", "GET", `/v2/accelerator_requests/${arq.uuid}`)).json.uuid).toBe(arq.uuid);
    expect((await call("service", "GET", `/v2/accelerator_requests/${arq.uuid}`)).status).toBe(200);
    expectFault(await call("member2", "GET", `/v2/accelerator_requests/${arq.uuid}`), 404, "NOT_FOUND");
    const seen = async (who: Who) => (await call(who, "GET", "/v2/accelerator_requests")).json.arqs.some((a: any) => a.uuid === arq.uuid);
    expect([await seen("member"), await seen("admin"), await seen("member2")]).toEqual([true, true, false]);
    expectFault(await call("member2", "DELETE", `/v2/accelerator_requests?arqs=${arq.uuid}`), 404, "NOT_FOUND");
    expectFault(await call("member", "GET", `/v2/accelerator_requests/${randomUUID()}`), 404, "NOT_FOUND");
    // openstacksdk deletes one ARQ at /accelerator_requests/{uuid}.
    expect((await call("member", "DELETE", `/v2/accelerator_requests/${arq.uuid}`)).status).toBe(204);
  });

  it("binds with a JSON-patch map: 202 and no body, then Bound with its attach handle", async () => {
    const arqs = await create("member", "two-groups");
    const instance = randomUUID();
    const r = await bind(arqs.map((a) => a.uuid), instance);
    expect([r.status, r.text]).toEqual([202, ""]);
    const list = (await call("member", "GET", `/v2/accelerator_requests?instance=${instance}&bind_state=resolved`)).json.arqs;
    expect(list).toHaveLength(2);
    for (const a of list) {
      expect(a).toMatchObject({ state: "Bound", hostname: "compute1", device_rp_uuid: rp, instance_uuid: instance, project_id: "p1", attach_handle_type: "TEST_PCI" });
      expect(Object.keys(a.attach_handle_info).sort()).toEqual(["bus", "device", "domain", "function"]);
      expect(a.attach_handle_uuid).toMatch(/^[0-9a-f-]{36}$/);
      expect(a.updated_at).toMatch(/\+00:00$/);
    }
    // A retry of the same bind changes nothing; the instance is bound once (Cyborg: 400).
    expect((await bind(arqs.map((a) => a.uuid), instance)).status).toBe(202);
    const [extra] = await create("member");
    expectFault(await bind([extra.uuid], instance), 409, "CONFLICT");
    expect((await call("member", "GET", `/v2/accelerator_requests?instance=${instance}`)).json.arqs).toHaveLength(2);
    // The bound ARQs are Nova's: a member deletes neither them nor the instance's.
    expectFault(await call("member", "DELETE", `/v2/accelerator_requests?arqs=${arqs[0].uuid}`), 403, "FORBIDDEN", /requires a service token/);
    expectFault(await call("member", "DELETE", `/v2/accelerator_requests?instance=${instance}`), 403, "FORBIDDEN", /requires a service token/);
    expect((await call("service", "DELETE", `/v2/accelerator_requests?instance=${instance}`)).status).toBe(204);
    expect((await call("service", "DELETE", `/v2/accelerator_requests?instance=${instance}`)).status).toBe(204);
    expect((await call("member", "GET", `/v2/accelerator_requests?instance=${instance}`)).json.arqs).toEqual([]);
    await call("member", "DELETE", `/v2/accelerator_requests?arqs=${extra.uuid}`);
  });

  it("binds and unbinds only with a service token, in X-Auth-Token or X-Service-Token", async () => {
    const [arq] = await create("member");
    const instance = randomUUID();
    expectFault(await bind([arq.uuid], instance, "member"), 403, "FORBIDDEN", /requires a service token/);
    expectFault(await bind([arq.uuid], instance, "admin"), 403, "FORBIDDEN", /requires a service token/);
    // Nova's way: the user's token, and its own as X-Service-Token; the ARQ stays in the user's project.
    const viaServiceToken = await call("member", "PATCH", "/v2/accelerator_requests", {
      body: bindPatch([arq.uuid], { hostname: "compute1", rp, instance }),
      serviceToken: "service",
    });
    expect(viaServiceToken.status, viaServiceToken.text).toBe(202);
    expect((await call("member", "GET", `/v2/accelerator_requests/${arq.uuid}`)).json).toMatchObject({ state: "Bound", project_id: "p1" });
    expectFault(await call("member", "PATCH", "/v2/accelerator_requests", { body: unbindPatch([arq.uuid]) }), 403, "FORBIDDEN");
    const unbound = await call("service", "PATCH", `/v2/accelerator_requests/${arq.uuid}`, { body: unbindPatch([arq.uuid]) });
    expect(unbound.status).toBe(202);
    expect((await call("member", "GET", `/v2/accelerator_requests/${arq.uuid}`)).json).toMatchObject({
      state: "Unbound", hostname: null, instance_uuid: null, device_rp_uuid: null, attach_handle_type: "", attach_handle_info: {}, project_id: "p1",
    });
    // Unbound, it is the member's to delete again.
    expect((await call("member", "DELETE", `/v2/accelerator_requests?arqs=${arq.uuid}`)).status).toBe(204);
  });

  it("takes a user token it cannot check (Keystone's, forwarded by Nova) when Nova's service token vouches for it", async () => {
    const keystone = { "x-auth-token": "gAAAAABkeystone-user-token-not-in-the-registry" };
    expectFault(await call(null, "GET", "/v2/accelerator_requests", { headers: keystone }), 401, "UNAUTHENTICATED");
    expectFault(await call(null, "GET", "/v2/accelerator_requests", { headers: keystone, serviceToken: "admin" }), 401, "UNAUTHENTICATED");
    const created = await call(null, "POST", "/v2/accelerator_requests", { headers: keystone, serviceToken: "service", body: { device_profile_name: "fpga" } });
    expect(created.status).toBe(201);
    const [arq] = created.json.arqs;
    expect(arq.project_id).toBe("service");
    const instance = randomUUID();
    const bound = await call(null, "PATCH", "/v2/accelerator_requests", { headers: keystone, serviceToken: "service", body: bindPatch([arq.uuid], { hostname: "compute1", rp, instance }) });
    expect(bound.status).toBe(202);
    expect((await call(null, "DELETE", `/v2/accelerator_requests?instance=${instance}`, { headers: keystone, serviceToken: "service" })).status).toBe(204);
  });

  it("names a refused bind's field as the PATCH body names it, not as GraphQL does", async () => {
    const [arq] = await create("member");
    const noInstance = { [arq.uuid]: [{ op: "add", path: "/hostname", value: "compute1" }, { op: "add", path: "/device_rp_uuid", value: rp }] };
    const r = await call("service", "PATCH", "/v2/accelerator_requests", { body: noInstance });
    expectFault(r, 400, "BAD_USER_INPUT");
    expect(r.fault!.field).toBe(`${arq.uuid}/instance_uuid`);
    expect(r.fault!.faultstring).not.toMatch(/bindings\[|instanceUuid|arqUuid/);
    await call("service", "DELETE", `/v2/accelerator_requests?arqs=${arq.uuid}`);
  });

  it("refuses to bind an ARQ in a state that cannot bind (409; Cyborg's ARQBadState is a 500)", async () => {
    const [arq] = await create("member");
    const first = randomUUID();
    expect((await bind([arq.uuid], first)).status).toBe(202);
    expectFault(await bind([arq.uuid], randomUUID()), 409, "CONFLICT", new RegExp(`Bad state: BOUND .* It is bound to instance ${first} on compute1: unbind it first .*"op": "remove".*then bind it again\\.$`));
    await call("service", "DELETE", `/v2/accelerator_requests?instance=${first}`);
  });

  it("takes /project_id from 2.1, from admins only", async () => {
    const [arq] = await create("service");
    const body = { [arq.uuid]: [...bindPatch([arq.uuid], { hostname: "compute1", rp, instance: randomUUID() })[arq.uuid]!, { op: "add", path: "/project_id", value: "p7" }] };
    expectFault(await call("service", "PATCH", "/v2/accelerator_requests", { body }), 406, "NOT_ACCEPTABLE", /2\.1/);
    expectFault(await call("service", "PATCH", "/v2/accelerator_requests", { body, version: 1 }), 403, "FORBIDDEN", /arq:bind_project/);
    expect((await call("admin", "PATCH", "/v2/accelerator_requests", { body, version: 1, serviceToken: "service" })).status).toBe(202);
    await call("service", "DELETE", `/v2/accelerator_requests?arqs=${arq.uuid}`);
  });

  it("answers 4xx for bad patches, lists and deletes (Cyborg: 500 for several)", async () => {
    const [arq] = await create("member");
    const patch = (body: unknown) => call("service", "PATCH", "/v2/accelerator_requests", { body });
    const r = await patch({ [arq.uuid]: bindPatch([arq.uuid], { hostname: "compute1", rp, instance: randomUUID() })[arq.uuid]!.slice(0, 2) });
    expectFault(r, 400, "BAD_USER_INPUT", /Fields absent in patch: instance_uuid/);
    expectFault(await patch({ [arq.uuid]: [{ op: "replace", path: "/hostname", value: "x" }] }), 400, "BAD_USER_INPUT", /add or remove/);
    expectFault(await patch({ [arq.uuid]: [{ op: "add", path: "/state", value: "Bound" }] }), 400, "BAD_USER_INPUT", /Unsupported path/);
    expectFault(await patch([]), 400, "BAD_USER_INPUT");
    expectFault(await patch(bindPatch([randomUUID()], { hostname: "compute1", rp, instance: randomUUID() })), 404, "NOT_FOUND");
    const other = await call("service", "PATCH", `/v2/accelerator_requests/${randomUUID()}`, { body: unbindPatch([arq.uuid]) });
    expectFault(other, 400, "BAD_USER_INPUT", /must hold the patch/);
    expectFault(await call("member", "GET", "/v2/accelerator_requests?bind_state=started"), 400, "BAD_USER_INPUT", /resolved/);
    expectFault(await call("member", "GET", "/v2/accelerator_requests?state=Bound"), 400, "BAD_USER_INPUT", /Unknown argument/);
    expectFault(await call("service", "DELETE", "/v2/accelerator_requests"), 400, "BAD_USER_INPUT", /exactly one/);
    expectFault(await call("service", "DELETE", `/v2/accelerator_requests?arqs=${arq.uuid}&instance=${randomUUID()}`), 400, "BAD_USER_INPUT");
    // All or nothing: one unknown uuid, nothing deleted.
    expectFault(await call("member", "DELETE", `/v2/accelerator_requests?arqs=${arq.uuid},${randomUUID()}`), 404, "NOT_FOUND");
    expect((await call("member", "GET", `/v2/accelerator_requests/${arq.uuid}`)).status).toBe(200);
    expectFault(await call("member", "DELETE", `/v2/accelerator_requests?arqs=${arq.uuid},`), 400, "BAD_USER_INPUT");
    expect((await call("member", "DELETE", `/v2/accelerator_requests?arqs=${arq.uuid}`)).status).toBe(204);
  });

  it("bind_state=resolved alone lists the resolved ARQs", async () => {
    const [a, b] = [...(await create("member")), ...(await create("member"))];
    await bind([a.uuid], randomUUID());
    const resolved = (await call("member", "GET", "/v2/accelerator_requests?bind_state=resolved")).json.arqs.map((x: any) => x.uuid);
    expect(resolved).toContain(a.uuid);
    expect(resolved).not.toContain(b.uuid);
    await call("service", "DELETE", `/v2/accelerator_requests?arqs=${a.uuid},${b.uuid}`);
  });

  it("a bind made over REST reaches a GraphQL acceleratorRequestBound subscriber", async () => {
    const arqs = await create("member", "two-groups");
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    await new Promise((r) => setTimeout(r, 100));
    expect((await bind(arqs.map((a) => a.uuid), instance)).status).toBe(202);
    const events = (await sub.next(2)).map((e) => e.acceleratorRequestBound);
    sub.unsubscribe();
    expect(events.map((e) => e.tag).sort()).toEqual(arqs.map((a) => a.uuid).sort());
    for (const e of events) expect(e).toMatchObject({ name: "accelerator-request-bound", serverUuid: instance, status: "COMPLETED", arq: { state: "BOUND", attachHandleType: "TEST_PCI" } });
    await call("service", "DELETE", `/v2/accelerator_requests?instance=${instance}`);
  });

  it("a bind made over GraphQL reads back over REST, and a REST delete by instance is seen by GraphQL", async () => {
    const [arq] = (await t.ok("service", op.CREATE_ARQS, { name: "fpga" })).createAcceleratorRequests;
    const instance = randomUUID();
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: instance }] });
    const [shown] = (await call("service", "GET", `/v2/accelerator_requests?instance=${instance}&bind_state=resolved`)).json.arqs;
    const [gql] = (await t.ok("service", op.ARQS_OF, { instance })).acceleratorRequests.nodes;
    expect(shown).toMatchObject({ uuid: arq.uuid, state: "Bound", instance_uuid: instance, attach_handle_type: "TEST_PCI", attach_handle_uuid: gql.attachHandleUuid, attach_handle_info: gql.attachHandleInfo });
    expect((await call("service", "DELETE", `/v2/accelerator_requests?instance=${instance}`)).status).toBe(204);
    expect((await t.ok("service", op.ARQS_OF, { instance })).acceleratorRequests.totalCount).toBe(0);
  });
});

describe("bind_state=resolved while a bind is under way", () => {
  let t: TestService;
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));

  beforeAll(async () => {
    // Binds only start in the request; the binder, held here, allocates later (a slow host).
    t = await startTestService({ overrides: { bindInline: false, binder: { beforeAllocate: () => held } } });
  });
  afterAll(async () => {
    release();
    await t?.close();
  });

  it("answers 423 until every ARQ of the instance is resolved, then lists them", async () => {
    const rest = restClient(t.url);
    const rp = await setUp(t);
    const arqs = (await rest.call("service", "POST", "/v2/accelerator_requests", { body: { device_profile_name: "two-groups" } })).json.arqs;
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    const uuids = arqs.map((a: any) => a.uuid);
    expect((await rest.call("service", "PATCH", "/v2/accelerator_requests", { body: bindPatch(uuids, { hostname: "compute1", rp, instance }) })).status).toBe(202);
    const locked = await rest.call("service", "GET", `/v2/accelerator_requests?instance=${instance}&bind_state=resolved`);
    expectFault(locked, 423, "LOCKED", /not resolved yet/);
    const pending = (await rest.call("service", "GET", `/v2/accelerator_requests?instance=${instance}`)).json.arqs;
    expect(pending.map((a: any) => a.state)).toEqual(["BindStarted", "BindStarted"]);
    release();
    await sub.next(2);
    sub.unsubscribe();
    const done = await rest.call("service", "GET", `/v2/accelerator_requests?instance=${instance}&bind_state=resolved`);
    expect(done.json.arqs.map((a: any) => a.state)).toEqual(["Bound", "Bound"]);
  });
});

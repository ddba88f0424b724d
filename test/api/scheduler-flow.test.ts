import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../support/redis.js";
import { collect, FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

/**
 * The compute scheduler's whole flow, through real HTTP and WebSocket: create a profile, report a
 * host, read the resource providers, create ARQs, subscribe, bind, receive one COMPLETED event per
 * ARQ, read the attach handles, unbind, delete by instance.
 */
async function schedulerFlow(t: TestService) {
  await t.ok("admin", op.CREATE_PROFILE, {
    input: { name: "fpga-x2", groups: [{ "resources:FPGA": "2", "trait:CUSTOM_FAKE_DEVICE": "required" }] },
  });
  const report = await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(4) });
  expect(report.reportHostInventory).toMatchObject({ hostname: "compute1", added: 1, removed: 0 });

  const { resourceProviders: rps } = await t.ok("service", op.RPS, { hostname: "compute1" });
  expect(rps).toHaveLength(1);
  expect(rps[0]).toMatchObject({ name: "compute1_FakeDevice", parentProviderName: "compute1", resourceClass: "FPGA", total: 4, used: 0 });
  expect(rps[0].traits).toContain("CUSTOM_FAKE_DEVICE");

  const { createAcceleratorRequests: arqs } = await t.ok("service", op.CREATE_ARQS, { name: "fpga-x2" });
  expect(arqs.map((a: any) => [a.state, a.deviceProfileGroupId])).toEqual([["INITIAL", 0], ["INITIAL", 0]]);

  const instance = randomUUID();
  const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
  const bindings = arqs.map((a: any) => ({ arqUuid: a.uuid, hostname: "compute1", deviceRpUuid: rps[0].uuid, instanceUuid: instance }));
  const { bindAcceleratorRequests: started } = await t.ok("service", op.BIND, { bindings });
  for (const a of started) expect(["BIND_STARTED", "BOUND"]).toContain(a.state);

  const events = await sub.next(2);
  expect(events.map((e) => e.acceleratorRequestBound.tag).sort()).toEqual(arqs.map((a: any) => a.uuid).sort());
  for (const e of events) {
    expect(e.acceleratorRequestBound).toMatchObject({ name: "accelerator-request-bound", serverUuid: instance, status: "COMPLETED" });
    // Published only after the read models show it: the payload's ARQ is already BOUND.
    expect(e.acceleratorRequestBound.arq.state).toBe("BOUND");
  }
  // Exactly one per ARQ: nothing more arrives.
  await new Promise((r) => setTimeout(r, 200));
  expect(sub.events).toHaveLength(2);

  const bound = (await t.ok("service", op.ARQS_OF, { instance })).acceleratorRequests.nodes;
  expect(bound).toHaveLength(2);
  const handles = new Set<string>();
  for (const a of bound) {
    expect(a).toMatchObject({ state: "BOUND", hostname: "compute1", instanceUuid: instance, attachHandleType: "TEST_PCI" });
    expect(Object.keys(a.attachHandleInfo).sort()).toEqual(["bus", "device", "domain", "function"]);
    handles.add(a.attachHandleUuid);
  }
  expect(handles.size).toBe(2);
  expect((await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].used).toBe(2);

  const { unbindAcceleratorRequests: unbound } = await t.ok("service", op.UNBIND, { uuids: [arqs[0].uuid] });
  expect(unbound[0]).toMatchObject({ state: "UNBOUND", instanceUuid: null, attachHandleUuid: null });
  expect((await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].used).toBe(1);

  const { deleteAcceleratorRequests: deleted } = await t.ok("service", op.DELETE_ARQS, { instance });
  expect(deleted).toEqual([arqs[1].uuid]);
  expect((await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].used).toBe(0);
  // Idempotent, as Cyborg's delete by instance.
  expect((await t.ok("service", op.DELETE_ARQS, { instance })).deleteAcceleratorRequests).toEqual([]);
  sub.unsubscribe();
  await released(t);
}

/** The server lets go of completed subscriptions (it once kept every one, waiting forever). */
async function released(t: TestService) {
  const deadline = Date.now() + 5_000;
  while (t.service.notifications.listening > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(t.service.notifications.listening).toBe(0);
}

async function abandonedSubscriptions(t: TestService) {
  const client = t.ws("service");
  const subs = Array.from({ length: 20 }, (_, i) => collect(client, op.BOUND, i % 2 ? { instance: randomUUID() } : { arqs: [randomUUID()] }));
  const deadline = Date.now() + 5_000;
  while (t.service.notifications.listening < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(t.service.notifications.listening).toBe(20);
  for (const sub of subs) sub.unsubscribe();
  await released(t);
}

describe("the compute-scheduler flow, embedded", () => {
  let t: TestService;
  beforeAll(async () => (t = await startTestService()));
  afterAll(() => t?.close());
  it("creates, binds, notifies, attaches, unbinds and deletes", () => schedulerFlow(t));
  it("lets go of subscriptions that clients complete while they wait", () => abandonedSubscriptions(t));
});

describe("the compute-scheduler flow, on Redis", () => {
  let t: TestService;
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
    t = await startTestService({ env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await t?.close();
    await redis?.stop();
  });
  it("creates, binds, notifies, attaches, unbinds and deletes", () => schedulerFlow(t));
  it("lets go of subscriptions that clients complete while they wait", () => abandonedSubscriptions(t));
});

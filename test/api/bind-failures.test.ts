import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "./harness.js";
import * as op from "./operations.js";

/** Each failure gives one FAILED accelerator-request-bound event with a reason a person can act on. */
describe("binds that fail", () => {
  let t: TestService;
  let rpUuid: string;
  let deviceUuid: string;

  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "one-fpga", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1) });
    rpUuid = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
    deviceUuid = (await t.ok("admin", op.DEVICES)).devices.nodes[0].uuid;
  });
  afterAll(() => t?.close());

  async function bindOne(rp: string, hostname = "compute1") {
    const [arq] = (await t.ok("service", op.CREATE_ARQS, { name: "one-fpga" })).createAcceleratorRequests;
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: arq.uuid, hostname, deviceRpUuid: rp, instanceUuid: instance }] });
    const [e] = await sub.next(1);
    sub.unsubscribe();
    return { arq, instance, event: e!.acceleratorRequestBound };
  }

  it("to an unknown resource provider", async () => {
    const { event } = await bindOne(randomUUID());
    expect(event.status).toBe("FAILED");
    expect(event.reason).toMatch(/resource provider .*: pick one of the host's providers \(resourceProviders\(hostname: "compute1"\)/i);
    expect(event.arq.state).toBe("BIND_FAILED");
  });

  it("to a full deployable", async () => {
    const first = await bindOne(rpUuid);
    expect(first.event.status).toBe("COMPLETED");
    const second = await bindOne(rpUuid);
    expect(second.event.status).toBe("FAILED");
    expect(second.event.reason).toMatch(/free attach handle .*: every accelerator there is held; pick another provider/i);
    // The reason stays on the ARQ, for GraphQL and REST alike, after the event has gone by.
    const arq = (await t.ok("service", `query($u: ID!) { acceleratorRequest(uuid: $u) { state bindFailureReason } }`, { u: second.arq.uuid })).acceleratorRequest;
    expect(arq).toEqual({ state: "BIND_FAILED", bindFailureReason: second.event.reason });
    const rest = await fetch(new URL(`/v2/accelerator_requests/${second.arq.uuid}`, t.url), { headers: { "x-auth-token": TOKENS.service.token } });
    expect(((await rest.json()) as { bind_failure_reason: string }).bind_failure_reason).toBe(second.event.reason);
    const bound = (await t.ok("service", `query($u: ID!) { acceleratorRequest(uuid: $u) { bindFailureReason } }`, { u: first.arq.uuid })).acceleratorRequest;
    expect(bound.bindFailureReason).toBeNull();
    await t.ok("service", op.DELETE_ARQS, { instance: first.instance });
  });

  it("to a device in maintenance, which reserves its capacity", async () => {
    await t.ok("admin", op.SET_STATUS, { uuid: deviceUuid, status: "MAINTAINING" });
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0];
    expect(rp).toMatchObject({ total: 1, reserved: 1 });
    const { event } = await bindOne(rpUuid);
    expect(event.status).toBe("FAILED");
    expect(event.reason).toMatch(/is tainted: cyborg\.openstack\.org\/maintenance:NoSchedule .*: bind to another provider, or once the device is fit again remove the taint/);
    await t.ok("admin", op.SET_STATUS, { uuid: deviceUuid, status: "ENABLED" });
    expect((await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].reserved).toBe(0);
  });

  it("racing for the last handle: exactly one COMPLETED", async () => {
    const racers = 6;
    const results = await Promise.all(Array.from({ length: racers }, () => bindOne(rpUuid)));
    const statuses = results.map((r) => r.event.status);
    expect(statuses.filter((s) => s === "COMPLETED")).toHaveLength(1);
    expect(statuses.filter((s) => s === "FAILED")).toHaveLength(racers - 1);
    const devices = (await t.ok("admin", op.DEVICES)).devices.nodes;
    expect(devices[0].deployables[0].attachHandles.filter((h: any) => h.inUse)).toHaveLength(1);
    for (const r of results) await t.ok("service", op.DELETE_ARQS, { instance: r.instance });
  });

  it("counts the outcomes per minute and keeps the failures' reasons, though their ARQs are gone", async () => {
    const q = `{ bindOutcomes { from to bound failed truncated minutes { minute bound failed } recentFailures { arqUuid reason at } } }`;
    const o = (await t.ok("admin", q)).bindOutcomes;
    // Above: a bind to an unknown provider, one bound and one refused a full deployable, one to a
    // device in maintenance, and a race of six for one handle.
    expect([o.bound, o.failed, o.truncated]).toEqual([2, 8, false]);
    expect(o.minutes).toHaveLength(60);
    expect(o.minutes.reduce((n: number, m: { failed: number }) => n + m.failed, 0)).toBe(8);
    expect(Date.parse(o.to) - Date.parse(o.from)).toBe(3600_000);
    expect(o.recentFailures).toHaveLength(8);
    expect(o.recentFailures.map((f: { reason: string }) => f.reason).join("\n")).toMatch(/maint/i);
    expect(o.recentFailures[0].reason).toMatch(/free attach handle/i); // newest first: the race's losers
    const member = await t.gql("member", q);
    expect(member.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect((await t.gql("admin", `{ bindOutcomes(minutes: 0) { bound } }`)).errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "minutes" });
  });
});

describe("a bind that cannot finish in time", () => {
  let t: TestService;
  let release!: () => void;
  beforeAll(async () => {
    const held = new Promise<void>((r) => (release = r));
    t = await startTestService({ env: { BIND_TIMEOUT_S: "1" }, overrides: { bindInline: false, binder: { beforeAllocate: () => held } } });
  });
  afterAll(async () => {
    release();
    await t?.close();
  });

  it("fails after BIND_TIMEOUT_S with a reason, and the late allocation does not resurrect it", async () => {
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "slow", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1) });
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
    const [arq] = (await t.ok("service", op.CREATE_ARQS, { name: "slow" })).createAcceleratorRequests;
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { arqs: [arq.uuid] });
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: instance }] });
    const [e] = await sub.next(1);
    expect(e!.acceleratorRequestBound).toMatchObject({ status: "FAILED", tag: arq.uuid });
    expect(e!.acceleratorRequestBound.reason).toMatch(/BIND_TIMEOUT_S|within 1 s/);
    release();
    await t.service.binder!.idle();
    const after = (await t.ok("service", op.ARQS_OF, { instance })).acceleratorRequests.nodes[0];
    expect(after.state).toBe("BIND_FAILED");
    const used = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].used;
    expect(used).toBe(0);
    expect(sub.events).toHaveLength(1);
  });
});

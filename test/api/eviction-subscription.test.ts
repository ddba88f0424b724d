/**
 * acceleratorRequestEvicted over WebSocket: each eviction notice reaches the holder's subscription
 * as it is given, with the ARQ showing it; a holder that subscribes later gets the notices still
 * outstanding at once.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { collect, FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const TAINT = `mutation($uuid: ID!, $taint: TaintInput!) { taintDevice(uuid: $uuid, taint: $taint) { uuid lifecycleState } }`;
const EVICTED = `subscription($instance: ID, $arq: ID) { acceleratorRequestEvicted(instanceUuid: $instance, arqUuid: $arq) {
  arqUuid instanceUuid notice { deviceUuid taintKey reason deadline requestedAt } arq { uuid state eviction { deviceUuid taintKey } } } }`;
const ARQ = `query($uuid: ID!) { acceleratorRequest(uuid: $uuid) { uuid eviction { taintKey } } }`;
const HEALTH = { key: "cyborg.openstack.org/health", effect: "NoExecute", reason: "XID 79: GPU has fallen off the bus" };

interface Evicted {
  acceleratorRequestEvicted: { arqUuid: string; instanceUuid: string; notice: { deviceUuid: string; taintKey: string; reason: string; deadline: string }; arq: { uuid: string; state: string; eviction: { deviceUuid: string } | null } };
}

/** Two fake FPGAs on compute1: the harness's one, and a second on another PCI bus. */
function twoDevices() {
  const [a] = FAKE_HOST_DEVICES(2);
  const b = structuredClone(a!);
  b.controlPath.info.bus = "0d";
  b.deployables[0]!.name = "compute1_FakeDevice2";
  for (const h of b.deployables[0]!.attachHandles) h.info.bus = "0d";
  return [a!, b];
}

describe("acceleratorRequestEvicted", () => {
  let t: TestService;
  let devices: Array<{ uuid: string; rpUuid: string }>;

  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "evict", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: twoDevices() });
    devices = (await t.ok("admin", op.DEVICES)).devices.nodes.map((d: { uuid: string; deployables: Array<{ rpUuid: string }> }) => ({ uuid: d.uuid, rpUuid: d.deployables[0]!.rpUuid }));
    expect(devices).toHaveLength(2);
  });
  afterAll(() => t?.close());

  it("sends each notice to its holder as it is given, and the outstanding ones to a late subscriber", async () => {
    const [a, b] = devices as [{ uuid: string; rpUuid: string }, { uuid: string; rpUuid: string }];
    const arqs: string[] = [];
    for (let i = 0; i < 3; i++) arqs.push((await t.ok("service", op.CREATE_ARQS, { name: "evict" })).createAcceleratorRequests[0].uuid);
    const [onA, onB, otherOnA] = arqs as [string, string, string];
    const instance = randomUUID();
    const other = randomUUID();
    const bound = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { arqs });
    await t.ok("service", op.BIND, {
      bindings: [
        { arqUuid: onA, hostname: "compute1", deviceRpUuid: a.rpUuid, instanceUuid: instance },
        { arqUuid: onB, hostname: "compute1", deviceRpUuid: b.rpUuid, instanceUuid: instance },
        { arqUuid: otherOnA, hostname: "compute1", deviceRpUuid: a.rpUuid, instanceUuid: other },
      ],
    });
    expect((await bound.next(3)).map((e) => e.acceleratorRequestBound.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
    bound.unsubscribe();

    const holder = collect<Evicted>(t.ws("service"), EVICTED, { instance });
    await t.ok("admin", TAINT, { uuid: a.uuid, taint: HEALTH });
    // The first notice proves the subscription listens (it came live, or from the read model after listening began) ...
    const [first] = await holder.next(1);
    expect(first!.acceleratorRequestEvicted).toMatchObject({ arqUuid: onA, instanceUuid: instance, notice: { deviceUuid: a.uuid, taintKey: HEALTH.key, reason: HEALTH.reason }, arq: { uuid: onA, state: "BOUND", eviction: { deviceUuid: a.uuid } } });
    expect(Date.parse(first!.acceleratorRequestEvicted.notice.deadline)).toBeGreaterThan(Date.now());

    // ... so the second, given after it, can only come live.
    await t.ok("admin", TAINT, { uuid: b.uuid, taint: { ...HEALTH, reason: "ECC: uncorrectable errors" } });
    const [, second] = await holder.next(2);
    expect(second!.acceleratorRequestEvicted).toMatchObject({ arqUuid: onB, instanceUuid: instance, notice: { deviceUuid: b.uuid, reason: "ECC: uncorrectable errors" }, arq: { eviction: { deviceUuid: b.uuid } } });
    holder.unsubscribe();
    // The other instance's notice never reached this instance's subscription.
    expect(holder.events.map((e) => e.acceleratorRequestEvicted.arqUuid)).toEqual([onA, onB]);

    await vi.waitFor(async () => expect((await t.ok("service", ARQ, { uuid: otherOnA })).acceleratorRequest.eviction).not.toBeNull(), { timeout: 10_000, interval: 20 });
    const late = collect<Evicted>(t.ws("service"), EVICTED, { arq: otherOnA });
    const [outstanding] = await late.next(1);
    late.unsubscribe();
    expect(outstanding!.acceleratorRequestEvicted).toMatchObject({ arqUuid: otherOnA, instanceUuid: other, notice: { deviceUuid: a.uuid, taintKey: HEALTH.key } });
  });

  it("is refused without a token", async () => {
    const anonymous = collect<Evicted>(t.ws(null), EVICTED, { arq: randomUUID() });
    await expect(anonymous.next(1, 5_000)).rejects.toThrow(/subscription error|UNAUTHENTICATED|Unauthorized|4401/i);
    anonymous.unsubscribe();
  });
});

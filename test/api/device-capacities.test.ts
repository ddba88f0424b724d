/**
 * A device's capacities over the API: an agent's report carries them, Device.capacities shows
 * each with what is used and free, an unchanged report writes nothing, a changed total writes one
 * DeviceCapacitiesChanged, and a capacity no profile could draw from is refused with the field
 * named. Binds of a group asking for a VF and an amount of bandwidth draw it, never past the total
 * however many race, and give it back when unbound. The placement engine counts, explains and
 * places by the bandwidth free.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stream } from "../../src/domain/shared/types.js";
import { collect, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";
import { NIC_BW_CLASS, sriovNic } from "./sriov-nic.js";

const CAPACITIES = `query { devices(filter: { hostname: "compute1" }) { nodes { uuid capacities { name resourceClass unit total used free holders { arqUuid amount } } } } }`;

describe("Device.capacities", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t?.close());

  it("is empty for a device reported without capacities", async () => {
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: [sriovNic({ totalKbps: null })] });
    const [d] = (await t.ok("admin", CAPACITIES)).devices.nodes;
    expect(d.capacities).toEqual([]);
  });

  it("shows the reported capacity, nothing drawn", async () => {
    expect((await t.ok("agent", op.REPORT, { hostname: "compute1", devices: [sriovNic()] })).reportHostInventory).toMatchObject({ updated: 1 });
    const [d] = (await t.ok("admin", CAPACITIES)).devices.nodes;
    expect(d.capacities).toEqual([{ name: "bandwidth", resourceClass: NIC_BW_CLASS, unit: "kbit/s", total: 25_000_000, used: 0, free: 25_000_000, holders: [] }]);
  });

  it("writes nothing while it holds, and one event when the total changes", async () => {
    const head = await t.service.store.headPosition();
    expect((await t.ok("agent", op.REPORT, { hostname: "compute1", devices: [sriovNic()] })).reportHostInventory).toMatchObject({ updated: 0, unchanged: 1 });
    expect(await t.service.store.headPosition()).toBe(head);

    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: [sriovNic({ totalKbps: 10_000_000 })] });
    const written = (await t.service.store.readStream(stream.host("compute1"))).filter((e) => e.position > head!).map((e) => e.type);
    expect(written).toEqual(["DeviceCapacitiesChanged", "HostReportSettled"]);
    const [d] = (await t.ok("admin", CAPACITIES)).devices.nodes;
    expect(d.capacities[0]).toMatchObject({ total: 10_000_000, free: 10_000_000 });
  });

  it("refuses a capacity no profile could draw from, with the field named, and writes nothing", async () => {
    const head = await t.service.store.headPosition();
    const nic = sriovNic();
    const withClass = (resourceClass: string) => [{ ...nic, capacities: [{ ...nic.capacities![0]!, resourceClass }] }];
    const unknown = await t.gql("agent", op.REPORT, { hostname: "compute1", devices: withClass("MEMORY_MB") });
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "devices[0].capacities[0].resourceClass" });
    const handleClass = await t.gql("agent", op.REPORT, { hostname: "compute1", devices: withClass("SRIOV_NET_VF") });
    expect(handleClass.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "devices[0].capacities[0].resourceClass" });
    expect(handleClass.errors?.[0]?.message).toMatch(/class of its own/);
    expect(await t.service.store.headPosition()).toBe(head);
  });
});

describe("binds drawing bandwidth", () => {
  let t: TestService;
  let rpUuid: string;
  const PROFILE = { name: "vf-1g", groups: [{ "resources:SRIOV_NET_VF": "1", [`resources:${NIC_BW_CLASS}`]: "1000000" }] };

  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: PROFILE });
    // 8 VFs share 2.5 Gbit/s: two binds of 1 Gbit/s fit, a third does not.
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: [sriovNic({ vfs: 8, totalKbps: 2_500_000 })] });
    rpUuid = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
  });
  afterAll(() => t?.close());

  async function bindOne() {
    const arqs = (await t.ok("service", op.CREATE_ARQS, { name: PROFILE.name })).createAcceleratorRequests;
    expect(arqs).toHaveLength(1);
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: arqs[0].uuid, hostname: "compute1", deviceRpUuid: rpUuid, instanceUuid: instance }] });
    const [e] = await sub.next(1);
    sub.unsubscribe();
    return { arq: arqs[0], instance, event: e!.acceleratorRequestBound };
  }

  it("racing binds draw no more than the total; the others fail naming the capacity, free and asked", async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => bindOne()));
    const done = results.filter((r) => r.event.status === "COMPLETED");
    expect(done).toHaveLength(2);
    for (const r of results.filter((x) => x.event.status === "FAILED")) {
      expect(r.event.reason).toMatch(/capacity bandwidth \(NET_BW_EGR_KILOBIT_PER_SEC\) of device .* has 500000 of 2500000 kbit\/s free; the ARQ asks for 1000000/);
    }
    const [d] = (await t.ok("admin", CAPACITIES)).devices.nodes;
    expect(d.capacities[0]).toMatchObject({ used: 2_000_000, free: 500_000 });
    expect(new Set(d.capacities[0].holders.map((h: { arqUuid: string }) => h.arqUuid))).toEqual(new Set(done.map((r) => r.arq.uuid)));
    // The provider shows the bandwidth as Placement has it, beside its VFs.
    const rps = (await t.ok("service", `query { resourceProviders(hostname: "compute1") { uuid resourceClass total used capacities { resourceClass total reserved used } } }`)).resourceProviders;
    expect(rps).toEqual([{ uuid: rpUuid, resourceClass: "SRIOV_NET_VF", total: 8, used: 2, capacities: [{ resourceClass: NIC_BW_CLASS, total: 2_500_000, reserved: 0, used: 2_000_000 }] }]);

    await t.ok("service", op.DELETE_ARQS, { instance: done[0]!.instance });
    const [after] = (await t.ok("admin", CAPACITIES)).devices.nodes;
    expect(after.capacities[0]).toMatchObject({ used: 1_000_000, free: 1_500_000 });
    expect((await bindOne()).event.status).toBe("COMPLETED");
  });

  it("refuses at once a bind to a provider whose device offers no bandwidth", async () => {
    const plain = sriovNic({ totalKbps: null, bus: "5e" });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: [sriovNic({ vfs: 8, totalKbps: 2_500_000 }), plain] });
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders.find((p: { name: string }) => p.name === plain.deployables[0]!.name).uuid;
    const [arq] = (await t.ok("service", op.CREATE_ARQS, { name: PROFILE.name })).createAcceleratorRequests;
    const r = await t.gql("service", op.BIND, { bindings: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: randomUUID() }] });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "bindings[0].deviceRpUuid", details: { reason: "TARGET_MISMATCH", amounts: [NIC_BW_CLASS] } });
    expect(r.errors?.[0]?.message).toMatch(/no capacity of NET_BW_EGR_KILOBIT_PER_SEC to draw the group's amount from \(it offers no capacity\)/);
  });
});

describe("the placement engine and capacities", () => {
  let t: TestService;
  const PROFILE = { name: "vf-1g", groups: [{ "resources:SRIOV_NET_VF": "1", [`resources:${NIC_BW_CLASS}`]: "1000000" }] };

  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: PROFILE });
    // wide: 8 VFs sharing 2.5 Gbit/s; narrow: as many VFs, but 0.5 Gbit/s.
    await t.ok("admin", op.REPORT, { hostname: "wide", devices: [sriovNic({ hostname: "wide", vfs: 8, totalKbps: 2_500_000 })] });
    await t.ok("admin", op.REPORT, { hostname: "narrow", devices: [sriovNic({ hostname: "narrow", vfs: 8, totalKbps: 500_000 })] });
  });
  afterAll(() => t?.close());

  it("counts, explains and places by the bandwidth free, not only the VFs", async () => {
    const cap = `query($n: String!) { placementCapacity(deviceProfileName: $n) { total hosts { hostname count } } }`;
    expect((await t.ok("admin", cap, { n: PROFILE.name })).placementCapacity).toEqual({ total: 2, hosts: [{ hostname: "wide", count: 2 }] });
    const why = `query($n: String!) { explainPlacement(deviceProfileName: $n) { detail { hostname groups { providers { ruledOut { rule message } } } } } }`;
    const narrow = (await t.ok("admin", why, { n: PROFILE.name })).explainPlacement.detail.find((h: { hostname: string }) => h.hostname === "narrow");
    expect(narrow.groups[0].providers[0].ruledOut).toEqual({ rule: "CAPACITY", message: `its device has 500000 ${NIC_BW_CLASS} free, the group draws 1000000` });
    const place = `mutation($n: String!, $i: ID!) { placeAcceleratorRequests(deviceProfileName: $n, instanceUuid: $i) { hostname acceleratorRequests { state } } }`;
    for (let i = 0; i < 2; i++) expect((await t.ok("service", place, { n: PROFILE.name, i: randomUUID() })).placeAcceleratorRequests).toMatchObject({ hostname: "wide" });
    const refused = await t.gql("service", place, { n: PROFILE.name, i: randomUUID() });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: "CONFLICT", details: { reason: "NO_PLACEMENT" } });
    expect(refused.errors?.[0]?.message).toMatch(/CAPACITY/);
  });
});

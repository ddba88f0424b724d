/**
 * A device's capacities over the API: an agent's report carries them, Device.capacities shows
 * each with what is used and free, an unchanged report writes nothing, a changed total writes one
 * DeviceCapacitiesChanged, and a capacity no profile could draw from is refused with the field named.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stream } from "../../src/domain/shared/types.js";
import { startTestService, type TestService } from "./harness.js";
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

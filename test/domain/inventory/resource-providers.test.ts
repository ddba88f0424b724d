import { describe, expect, it } from "vitest";
import { desiredProviders } from "../../../src/domain/inventory/resource-providers.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { initialHostState } from "../../../src/domain/inventory/state.js";
import { allocate, apply, at, bdf, deployable, fold, fpga, HOST, named, release, report, reported } from "./fixtures.js";
import { BW, NIC_RP, PPS, drawing, nic } from "./nic.js";

const rp = (bus: string) => rpUuidFor(`${HOST}_${bdf(bus)}`);
const after = (state: ReturnType<typeof reported>, devices: unknown) => fold(report(state, devices).events, state);
const status = (deviceUuid: string, s: "ENABLED" | "MAINTAINING") => ({
  type: "SetDeviceStatus" as const,
  data: { hostname: HOST, deviceUuid, status: s, at: "2026-03-01T10:00:01.000Z" },
});

describe("desired resource providers of a host", () => {
  it("is one child of the host per deployable with a resource class, named and identified as Cyborg does", () => {
    const host = reported([fpga("af", { handles: 2 }), fpga("b0")]);
    expect(desiredProviders(host)).toEqual([
      {
        uuid: rp("af"),
        name: `${HOST}_0000:af:00.0`,
        parentName: HOST,
        resourceClass: "FPGA",
        total: 2,
        reserved: 0,
        capacities: [],
        traits: ["CUSTOM_FPGA_INTEL", "OWNER_CYBORG"],
        deployableUuid: expect.any(String),
        deviceUuid: expect.any(String),
      },
      expect.objectContaining({ uuid: rp("b0"), total: 1 }),
    ]);
    expect(desiredProviders(initialHostState())).toEqual([]);
  });

  it("leaves out deployables without an rc attribute and sorts and de-duplicates traits", () => {
    const region = deployable("c0", { name: named("region"), attributes: [{ key: "trait0", value: "CUSTOM_REGION" }], attachHandles: [] });
    const fn = deployable("c0", {
      attributes: [
        { key: "rc", value: "FPGA" },
        { key: "trait1", value: "CUSTOM_Z" },
        { key: "trait0", value: "CUSTOM_A" },
        { key: "trait2", value: "CUSTOM_A" },
        { key: "vendor", value: "not a trait" },
      ],
      parentName: named("region"),
    });
    const host = reported([fpga("c0", { deployables: [region, fn] })]);
    expect(desiredProviders(host).map((p) => [p.name, p.traits])).toEqual([[`${HOST}_0000:c0:00.0`, ["CUSTOM_A", "CUSTOM_Z", "OWNER_CYBORG"]]]);
  });

  it("follows reprogramming: function traits swapped by a report replace the old ones", () => {
    const before = reported([fpga("af", { deployables: [deployable("af", { attributes: [{ key: "rc", value: "FPGA" }, { key: "trait1", value: "CUSTOM_FPGA_INTEL_FUNCTION_A" }] })] })]);
    const programmed = after(before, [fpga("af", { deployables: [deployable("af", { attributes: [{ key: "rc", value: "FPGA" }, { key: "trait1", value: "CUSTOM_FPGA_INTEL_FUNCTION_B" }] })] })]);
    expect(desiredProviders(programmed)[0]!.traits).toEqual(["CUSTOM_FPGA_INTEL_FUNCTION_B", "OWNER_CYBORG"]);
  });

  it("reserves the whole inventory while the device is MAINTAINING", () => {
    const host = reported([fpga("af", { handles: 3 })]);
    const device = [...host.devices.keys()][0]!;
    expect(desiredProviders(apply(host, status(device, "MAINTAINING")))[0]).toMatchObject({ total: 3, reserved: 3 });
    expect(desiredProviders(apply(apply(host, status(device, "MAINTAINING")), status(device, "ENABLED")))[0]).toMatchObject({ reserved: 0 });
  });

  it("keeps a device that left the report while allocated, fully reserved, until released", () => {
    const host = apply(reported([fpga("af", { handles: 2 }), fpga("b0")]), allocate(rp("af"), "arq-1"));
    const lost = after(host, [fpga("b0")]);
    expect(desiredProviders(lost)).toEqual([
      expect.objectContaining({ uuid: rp("af"), total: 2, reserved: 2 }),
      expect.objectContaining({ uuid: rp("b0"), reserved: 0 }),
    ]);
    expect(desiredProviders(apply(lost, release("arq-1"))).map((p) => p.uuid)).toEqual([rp("b0")]);
  });

  it("reserves a deployable that left the report while allocated (only lost handles left)", () => {
    const host = apply(reported([fpga("af", { handles: 2 })]), allocate(rp("af"), "arq-1"));
    const lost = after(host, [{ ...fpga("af"), deployables: [] }]);
    expect(desiredProviders(lost)).toEqual([expect.objectContaining({ uuid: rp("af"), total: 2, reserved: 2 })]);
  });

  it("carries a device's capacities as more inventories of its provider, reserved with the device", () => {
    const host = reported([nic({ bandwidth: 10_000, packetRate: 50 })]);
    const [p] = desiredProviders(host);
    expect(p).toMatchObject({ uuid: NIC_RP, resourceClass: "SRIOV_NET_VF", total: 4, reserved: 0, capacities: [{ resourceClass: BW, total: 10_000, reserved: 0 }, { resourceClass: PPS, total: 50, reserved: 0 }] });
    const tainted = apply(host, status([...host.devices.keys()][0]!, "MAINTAINING"));
    expect(desiredProviders(tainted)[0]!.capacities).toEqual([{ resourceClass: BW, total: 10_000, reserved: 10_000 }, { resourceClass: PPS, total: 50, reserved: 50 }]);
    // Drawing does not change Placement's inventory: Nova's allocations count against it there.
    const bound = apply(host, { type: "AllocateAttachHandle", data: { hostname: HOST, rpUuid: NIC_RP, arqUuid: "a1", instanceUuid: "vm", at, requirements: drawing({ [BW]: 4_000 }) } });
    expect(desiredProviders(bound)[0]!.capacities[0]).toEqual({ resourceClass: BW, total: 10_000, reserved: 0 });
  });
});

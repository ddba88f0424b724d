/**
 * Binds that draw amounts from a device's capacity on the host stream: the draw is recorded with
 * the handle's allocation and released with it; a bind asking more than is free is refused naming
 * the capacity, the free and the asked amounts; a provider whose device offers no such capacity
 * does not fit the group; reported capacities are written only when they change.
 */
import { describe, expect, it } from "vitest";
import { deviceCapacitiesView } from "../../../src/app/capacities.js";
import type { HostCommand } from "../../../src/domain/inventory/decider.js";
import { isTargetMismatch } from "../../../src/domain/inventory/target-fit.js";
import type { HostState } from "../../../src/domain/inventory/state.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { HOST, apply, at, bdf, decide, fpga, release, report, reported, types } from "./fixtures.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { BW, NIC_RP, PPS, drawing, nic } from "./nic.js";

const bind = (arqUuid: string, amounts: Record<string, number>, rpUuid = NIC_RP): HostCommand => ({
  type: "AllocateAttachHandle",
  data: { hostname: HOST, rpUuid, arqUuid, instanceUuid: `vm-${arqUuid}`, at, requirements: drawing(amounts) },
});
const view = (s: HostState) => deviceCapacitiesView(s, [...s.devices.values()].find((d) => d.type === "NIC")!);
const refusal = (fn: () => unknown): DomainError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("not refused");
};

describe("capacity draws at bind", () => {
  it("records the draw with the allocation and frees it with the release", () => {
    let s = reported([nic({ bandwidth: 10_000 })]);
    const events = decide(s, bind("a1", { [BW]: 6_000 }));
    expect(types(events)).toEqual(["AttachHandleAllocated"]);
    expect(events[0]!.data).toMatchObject({ draws: [{ resourceClass: BW, amount: 6_000 }] });
    s = apply(s, bind("a1", { [BW]: 6_000 }));
    expect(view(s)).toEqual([{ name: "bandwidth", resourceClass: BW, unit: "kbit/s", total: 10_000, used: 6_000, free: 4_000, holders: [{ arqUuid: "a1", amount: 6_000 }] }]);
    s = apply(s, release("a1"));
    expect(view(s)[0]).toMatchObject({ used: 0, free: 10_000, holders: [] });
  });

  it("refuses a draw past the total, naming the capacity and the free and asked amounts", () => {
    let s = reported([nic({ bandwidth: 10_000 })]);
    s = apply(s, bind("a1", { [BW]: 6_000 }));
    const err = refusal(() => decide(s, bind("a2", { [BW]: 5_000 })));
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toMatch(/capacity bandwidth \(NET_BW_EGR_KILOBIT_PER_SEC\) of device .* has 4000 of 10000 kbit\/s free; the ARQ asks for 5000/);
    expect(isTargetMismatch(err)).toBe(false);
    // What fits still binds, to the last kbit/s.
    s = apply(s, bind("a2", { [BW]: 4_000 }));
    expect(view(s)[0]).toMatchObject({ used: 10_000, free: 0 });
  });

  it("draws every amount of the group or none", () => {
    let s = reported([nic({ bandwidth: 10_000, packetRate: 100 })]);
    const err = refusal(() => decide(s, bind("a1", { [BW]: 1_000, [PPS]: 101 })));
    expect(err.message).toMatch(/packet rate/);
    s = apply(s, bind("a1", { [BW]: 1_000, [PPS]: 100 }));
    expect(view(s).map((c) => c.used)).toEqual([1_000, 100]);
  });

  it("refuses at once a provider whose device offers no capacity of the amount's class", () => {
    const s = reported([nic({ bandwidth: 10_000 }), fpga("af")]);
    const noSuch = refusal(() => decide(s, bind("a1", { [PPS]: 10 })));
    expect(isTargetMismatch(noSuch)).toBe(true);
    expect(noSuch.details).toMatchObject({ amounts: [PPS] });
    expect(noSuch.message).toMatch(/no capacity of NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC .*it offers NET_BW_EGR_KILOBIT_PER_SEC/);
    const fpgaRp = rpUuidFor(`${HOST}_${bdf("af")}`);
    const noCapacity = refusal(() => decide(s, { type: "AllocateAttachHandle", data: { hostname: HOST, rpUuid: fpgaRp, arqUuid: "a2", instanceUuid: "vm", at, requirements: { ...drawing({ [BW]: 1 }), resourceClasses: ["FPGA"] } } }));
    expect(isTargetMismatch(noCapacity)).toBe(true);
    expect(noCapacity.message).toMatch(/it offers no capacity/);
  });

  it("writes the reported capacities once, and again only when they change", () => {
    const s = reported([nic({ bandwidth: 10_000 })]);
    expect(types(report(s, [nic({ bandwidth: 10_000 })]).events)).toEqual([]);
    expect(types(report(s, [nic({ bandwidth: 20_000 })]).events)).toEqual(["DeviceCapacitiesChanged"]);
    const { capacities: _, ...without } = nic();
    expect(report(s, [without]).events).toEqual([{ type: "DeviceCapacitiesChanged", data: { hostname: HOST, deviceUuid: [...s.devices.keys()][0], capacities: [], at } }]);
  });
});

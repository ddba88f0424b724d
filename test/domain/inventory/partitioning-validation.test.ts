import { describe, expect, it } from "vitest";
import { validateCapacities, validatePartitioning } from "../../../src/domain/inventory/partitioning-validation.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { h100 } from "./h100.js";

function refusal(fn: () => unknown): { field?: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return { field: e.field, message: e.message };
    throw e;
  }
  throw new Error("accepted");
}

const F = "devices[0].partitioning";
const handle = { type: "MIG", info: { uuid: "MIG-a" } };

describe("partitioning report validation", () => {
  it("accepts an H100 with its partitions, and nothing at all", () => {
    const report = { ...h100(), driverName: "nvidia_gpu_driver", partitions: [{ profile: "3g.40gb", uuid: "MIG-a", placement: { start: 4, size: 4 }, toolRef: { gpuInstanceId: 2 }, attachHandle: handle }] };
    expect(validatePartitioning(report, F)).toEqual(report);
    expect(validatePartitioning(null, F)).toBeNull();
    expect(validatePartitioning({ ...report, driverName: undefined }, F)?.driverName).toBeNull();
    expect(refusal(() => validatePartitioning({ ...report, driverName: "" }, F)).field).toBe(`${F}.driverName`);
  });

  it("refuses with the path of the offending field", () => {
    const h = h100();
    expect(refusal(() => validatePartitioning({ ...h, slots: 31 }, F)).field).toBe(`${F}.slots`);
    const unknownCounter = { ...h, profiles: [{ ...h.profiles[0]!, consumes: [{ counter: "memory", amount: 1 }] }] };
    expect(refusal(() => validatePartitioning(unknownCounter, F))).toEqual({ field: `${F}.profiles[0].consumes[0].counter`, message: 'the device declares no counter "memory"' });
    const pastSlots = { ...h, profiles: [{ ...h.profiles[0]!, placements: [{ start: 7, size: 2 }] }] };
    expect(refusal(() => validatePartitioning(pastSlots, F)).field).toBe(`${F}.profiles[0].placements[0]`);
    const unbounded = { ...h, slots: 0, profiles: [{ ...h.profiles[0]!, consumes: [], placements: [], maxInstances: null }] };
    expect(refusal(() => validatePartitioning(unbounded, F)).message).toMatch(/must be limited/);
    expect(refusal(() => validatePartitioning({ ...h, profiles: [...h.profiles, h.profiles[0]] }, F)).field).toBe(`${F}.profiles[6]`);
    expect(refusal(() => validatePartitioning({ ...h, profiles: [{ ...h.profiles[0]!, resourceClass: "mig small" }] }, F)).field).toBe(`${F}.profiles[0].resourceClass`);
  });

  it("refuses reported partitions that break the counters or overlap", () => {
    const part = (uuid: string, start: number) => ({ profile: "4g.40gb", uuid, placement: { start, size: 4 }, toolRef: {}, attachHandle: handle });
    expect(refusal(() => validatePartitioning({ ...h100(), partitions: [part("a", 0), part("b", 0)] }, F)).field).toBe(`${F}.partitions[1].placement`);
    expect(refusal(() => validatePartitioning({ ...h100(), partitions: [part("a", 0), part("b", 4)] }, F)).message).toMatch(/take 8 of counter "compute", which has 7/);
  });

  it("validates capacities", () => {
    const bw = { name: "bandwidth", resourceClass: "CUSTOM_NET_BW_MBPS", total: 25000, unit: "Mbit/s" };
    expect(validateCapacities([bw], "devices[0].capacities")).toEqual([bw]);
    expect(refusal(() => validateCapacities([{ ...bw, total: 0 }], "devices[0].capacities")).field).toBe("devices[0].capacities[0].total");
    expect(refusal(() => validateCapacities([bw, bw], "devices[0].capacities")).field).toBe("devices[0].capacities[1]");
  });
});

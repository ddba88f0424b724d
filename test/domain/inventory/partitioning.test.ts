import { describe, expect, it } from "vitest";
import { allocatePartition, fitsNow, partitionCreated, partitionDestroyed, partitioningFromReport, releasePartition } from "../../../src/domain/inventory/partitioning.js";
import type { DevicePartitioning } from "../../../src/domain/inventory/partition-state.js";
import { capacityFree, capacityFromReport, drawCapacity, releaseCapacity } from "../../../src/domain/inventory/capacity.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { h100 } from "./h100.js";

function take(p: DevicePartitioning, profile: string, arq: string, policy: "best-fit" | "first-fit" = "best-fit") {
  return allocatePartition(p, profile, arq, policy);
}

describe("partitioning of an H100", () => {
  it("says how many of each profile fit on an empty GPU", () => {
    const p = partitioningFromReport(h100());
    expect(["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"].map((n) => fitsNow(p, n))).toEqual([7, 4, 3, 2, 1, 1]);
  });

  it("reserves slots for a partition to be made and frees them when the agent fails", () => {
    const empty = partitioningFromReport(h100());
    const { partitioning, grant } = take(empty, "3g.40gb", "a");
    expect(grant.kind).toBe("CREATE");
    expect(fitsNow(partitioning, "3g.40gb")).toBe(1);
    expect(fitsNow(partitioning, "7g.80gb")).toBe(0);
    const failed = releasePartition(partitioning, "a", false);
    expect(failed.destroy).toBeNull();
    expect(fitsNow(failed.partitioning, "7g.80gb")).toBe(1);
  });

  it("places a small partition where it keeps the large spans free, unlike first fit", () => {
    const empty = partitioningFromReport(h100());
    const best = take(empty, "1g.10gb", "a").grant;
    const first = take(empty, "1g.10gb", "a", "first-fit").grant;
    expect(best.kind === "CREATE" && best.placement).toEqual({ start: 6, size: 1 });
    expect(first.kind === "CREATE" && first.placement).toEqual({ start: 0, size: 1 });
    const after = take(empty, "1g.10gb", "a").partitioning;
    expect(fitsNow(after, "4g.40gb")).toBe(1);
  });

  it("reuses an idle partition kept after release and destroys it otherwise", () => {
    let p = take(partitioningFromReport(h100()), "2g.20gb", "a").partitioning;
    p = partitionCreated(p, "a", { profile: "2g.20gb", uuid: "MIG-1", placement: { start: 4, size: 2 }, toolRef: { gpuInstanceId: 3 }, attachHandle: { type: "MIG", info: { uuid: "MIG-1" } } as never });
    const kept = releasePartition(p, "a", true);
    expect(kept.destroy).toBeNull();
    const again = take(kept.partitioning, "2g.20gb", "b");
    expect(again.grant.kind === "EXISTING" && again.grant.partition.uuid).toBe("MIG-1");
    const gone = releasePartition(p, "a", false);
    expect(gone.destroy?.uuid).toBe("MIG-1");
    expect(fitsNow(gone.partitioning, "7g.80gb")).toBe(0);
    expect(fitsNow(partitionDestroyed(gone.partitioning, "MIG-1"), "7g.80gb")).toBe(1);
  });

  it("refuses past the compute counter with a reason", () => {
    let p = take(partitioningFromReport(h100()), "4g.40gb", "a").partitioning;
    p = take(p, "3g.40gb", "b").partitioning;
    expect(() => take(p, "1g.10gb", "c")).toThrowError(/counter "compute" has 0 of 7 left/);
    expect(() => take(p, "9g.90gb", "c")).toThrowError(DomainError);
  });

  it("is idempotent per ARQ", () => {
    const first = take(partitioningFromReport(h100()), "1g.10gb", "a");
    const again = take(first.partitioning, "1g.10gb", "a");
    expect(again.partitioning).toBe(first.partitioning);
    expect(() => take(first.partitioning, "2g.20gb", "a")).toThrowError(/already holds/);
  });
});

describe("capacity", () => {
  it("draws by amount up to the total and gives it back", () => {
    let c = capacityFromReport({ name: "bandwidth", resourceClass: "CUSTOM_NET_BW_MBPS", total: 10000, unit: "Mbit/s" });
    c = drawCapacity(c, "a", 6000);
    expect(() => drawCapacity(c, "b", 5000)).toThrowError(/4000 of 10000 Mbit\/s free/);
    expect(() => drawCapacity(c, "b", 0)).toThrowError(/positive whole number/);
    c = drawCapacity(c, "b", 4000);
    expect(capacityFree(c)).toBe(0);
    expect(capacityFree(releaseCapacity(c, "a"))).toBe(6000);
  });
});

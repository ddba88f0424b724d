/**
 * bench:partitions' fragmentation figure, on the pure model (src/domain/inventory/partitioning.ts):
 * the same seeded churn of mixed sizes on DEVICES H100-like devices, once with each placement
 * policy. A request is "refused for fragmentation" when the model refuses it while the device's
 * counters and maxInstances allow it and the partitions that exist plus the new one would fit on
 * the device if they were regrouped (an exact search over the placements).
 */
import { allocatePartition, partitioningFromReport, releasePartition } from "../../src/domain/inventory/partitioning.js";
import type { DevicePartitioning } from "../../src/domain/inventory/partition-state.js";
import { countAllowance, spanBits, type PlacementPolicy } from "../../src/domain/inventory/partition-fit.js";
import type { DriverPartitioning, DriverPartitionProfile } from "../../src/domain/inventory/partitioning-report.js";
import { seededRandom } from "./seeded-random.js";

export interface FragmentationResult {
  policy: PlacementPolicy;
  requests: number;
  granted: number;
  refused: number;
  refusedForFragmentation: number;
  refusedPct: number;
}

/** Whether `profiles` (one entry per partition) can all be placed on an empty device of `slots` slots. */
export function fitsRegrouped(profiles: readonly DriverPartitionProfile[], slots: number): boolean {
  const order = [...profiles].sort((a, b) => Math.max(...b.placements.map((s) => s.size)) - Math.max(...a.placements.map((s) => s.size)));
  const place = (i: number, used: number): boolean => {
    if (i === order.length) return true;
    for (const s of order[i]!.placements) {
      if (s.start + s.size > slots || spanBits(s) & used) continue;
      if (place(i + 1, used | spanBits(s))) return true;
    }
    return false;
  };
  return place(0, 0);
}

export function churn(report: DriverPartitioning, devices: number, steps: number, policy: PlacementPolicy, seed: number): FragmentationResult {
  const rnd = seededRandom(seed);
  const state: DevicePartitioning[] = Array.from({ length: devices }, () => partitioningFromReport(report));
  const held: Array<{ device: number; arq: string }> = [];
  const profiles = report.profiles;
  let requests = 0;
  let granted = 0;
  let refused = 0;
  let fragmented = 0;
  for (let i = 0; i < steps; i++) {
    // Keep the devices busy: release about as often as the mix allows grants.
    if (held.length > 0 && rnd() < 0.45) {
      const k = Math.floor(rnd() * held.length);
      const h = held.splice(k, 1)[0]!;
      const { partitioning, destroy } = releasePartition(state[h.device]!, h.arq, false);
      // Destroyed at once: its slots are free for the next request.
      state[h.device] = destroy ? { ...partitioning, partitions: partitioning.partitions.filter((p) => p.uuid !== destroy.uuid) } : partitioning;
      continue;
    }
    const device = Math.floor(rnd() * devices);
    // Small sizes are asked for more often, as clouds see.
    const profile = profiles[Math.min(profiles.length - 1, Math.floor(rnd() ** 1.6 * profiles.length))]!;
    const arq = `arq-${i}`;
    requests++;
    const p = state[device]!;
    try {
      const r = allocatePartition(p, profile.name, arq, policy);
      state[device] = { ...r.partitioning, partitions: r.partitioning.partitions.map((x) => (x.holder === arq ? { ...x, status: "READY" as const, uuid: arq } : x)) };
      held.push({ device, arq });
      granted++;
    } catch {
      refused++;
      if (countAllowance(p, profile) > 0) {
        const now = p.partitions.map((x) => p.profiles.get(x.profile)!);
        if (fitsRegrouped([...now, profile], p.slots)) fragmented++;
      }
    }
  }
  return { policy, requests, granted, refused, refusedForFragmentation: fragmented, refusedPct: requests === 0 ? 0 : (100 * fragmented) / requests };
}

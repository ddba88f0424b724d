/**
 * What a partitioned device can still make: the placements open to a profile now, how many more
 * of it fit at once (Placement's inventory), and the placement policy that keeps large spans free.
 * Pure; devices have a handful of slots (MIG: 8), so the searches here are small and exact.
 */
import type { DriverPartitionProfile, SlotPlacement } from "./partitioning-report.js";
import type { DevicePartitioning } from "./partition-state.js";

/** How the allocation picks among the placements open to a profile. */
export type PlacementPolicy = "best-fit" | "first-fit";

/** The slots taken by partitions that exist or are being made or destroyed, as a bitmap. */
export function usedSlots(p: DevicePartitioning): number {
  let bits = 0;
  for (const part of p.partitions) if (part.placement) bits |= spanBits(part.placement);
  return bits;
}

export function spanBits(s: SlotPlacement): number {
  return ((1 << s.size) - 1) << s.start;
}

/** How much of each counter the partitions take now. */
export function counterUse(p: DevicePartitioning): Map<string, number> {
  const use = new Map<string, number>();
  for (const part of p.partitions) {
    for (const c of p.profiles.get(part.profile)?.consumes ?? []) use.set(c.counter, (use.get(c.counter) ?? 0) + c.amount);
  }
  return use;
}

/**
 * Why no new partition of the profile can be made, whatever the slots: a counter, maxInstances or
 * the one-profile rule; null when only the slots remain to be checked.
 */
export function blockedBesideSlots(p: DevicePartitioning, profile: DriverPartitionProfile): string | null {
  return blockedWith(p, profile, counterUse(p), 1);
}

/** How many more of the profile the counters, maxInstances and the one-profile rule allow (slots aside). */
export function countAllowance(p: DevicePartitioning, profile: DriverPartitionProfile): number {
  const use = counterUse(p);
  if (blockedWith(p, profile, use, 1) !== null) return 0;
  let n = Number.MAX_SAFE_INTEGER;
  for (const c of profile.consumes) {
    if (c.amount <= 0) continue;
    const total = p.counters.get(c.counter) ?? 0;
    n = Math.min(n, Math.floor((total - (use.get(c.counter) ?? 0)) / c.amount));
  }
  if (profile.maxInstances !== null) n = Math.min(n, profile.maxInstances - instancesOf(p, profile.name));
  return Math.max(0, n);
}

function blockedWith(p: DevicePartitioning, profile: DriverPartitionProfile, use: Map<string, number>, count: number): string | null {
  for (const c of profile.consumes) {
    const total = p.counters.get(c.counter);
    if (total === undefined) return `the device has no counter "${c.counter}"`;
    if ((use.get(c.counter) ?? 0) + c.amount * count > total) return `counter "${c.counter}" has ${total - (use.get(c.counter) ?? 0)} of ${total} left, the profile needs ${c.amount}`;
  }
  if (profile.maxInstances !== null && instancesOf(p, profile.name) + count > profile.maxInstances) {
    return `profile ${profile.name} allows at most ${profile.maxInstances} at once`;
  }
  if (p.oneProfileAtATime && p.partitions.some((part) => part.profile !== profile.name)) {
    return `the device holds another profile and makes one profile at a time`;
  }
  return null;
}

function instancesOf(p: DevicePartitioning, profile: string): number {
  return p.partitions.filter((part) => part.profile === profile).length;
}

/** The profile's placements whose slots are free now (all of them on a device without slots). */
export function openPlacements(p: DevicePartitioning, profile: DriverPartitionProfile, used = usedSlots(p)): SlotPlacement[] {
  return profile.placements.filter((s) => s.start >= 0 && s.start + s.size <= p.slots && (spanBits(s) & used) === 0);
}

/** Most non-overlapping placements of the profile that fit in the free slots (interval scheduling, earliest end first). */
export function placeableCount(profile: DriverPartitionProfile, slots: number, used: number): number {
  const spans = profile.placements
    .filter((s) => s.start >= 0 && s.size > 0 && s.start + s.size <= slots && (spanBits(s) & used) === 0)
    .sort((a, b) => a.start + a.size - (b.start + b.size));
  let n = 0;
  let end = -1;
  for (const s of spans) {
    if (s.start >= end) {
      n += 1;
      end = s.start + s.size;
    }
  }
  return n;
}

/** How many more partitions of the profile could be made now, on top of the free ones. */
export function makeableNow(p: DevicePartitioning, profile: DriverPartitionProfile): number {
  const allowed = countAllowance(p, profile);
  if (allowed === 0 || p.slots === 0 || profile.placements.length === 0) return allowed;
  return Math.min(allowed, placeableCount(profile, p.slots, usedSlots(p)));
}

/**
 * The placement to make a partition at. first-fit takes the lowest start. best-fit takes the one
 * after which the largest profiles keep the most room: it compares, largest span first, how many of
 * each profile would still fit in the free slots, then prefers the higher start (small partitions
 * gather at the end, as NVIDIA's own placement does).
 */
export function choosePlacement(
  p: DevicePartitioning,
  profile: DriverPartitionProfile,
  policy: PlacementPolicy,
): SlotPlacement | null {
  const used = usedSlots(p);
  const open = openPlacements(p, profile, used).sort((a, b) => a.start - b.start);
  if (open.length <= 1 || policy === "first-fit") return open[0] ?? null;
  const bySize = [...p.profiles.values()]
    .filter((q) => q.placements.length > 0)
    .sort((a, b) => maxSpan(b) - maxSpan(a) || a.name.localeCompare(b.name));
  let best = open[0]!;
  let bestScore = score(bySize, p.slots, used | spanBits(best));
  for (const s of open.slice(1)) {
    const sc = score(bySize, p.slots, used | spanBits(s));
    if (compareScores(sc, bestScore) >= 0) {
      best = s;
      bestScore = sc;
    }
  }
  return best;
}

function maxSpan(profile: DriverPartitionProfile): number {
  return Math.max(0, ...profile.placements.map((s) => s.size));
}

function score(bySize: DriverPartitionProfile[], slots: number, used: number): number[] {
  return bySize.map((q) => placeableCount(q, slots, used));
}

function compareScores(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

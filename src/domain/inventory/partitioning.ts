/**
 * A partitioned device's state, folded from its driver's report and the allocations on the host
 * stream: its counters and slots, the profiles it can make, the partitions that exist or are being
 * made or destroyed, and who holds each. `allocatePartition` never grants past a counter, a slot,
 * maxInstances or the one-profile rule; capacities (capacity.ts) are drawn by amount beside it.
 * Pure: the caller appends what these functions decide inside the host stream's revision, so
 * concurrent binds are serialised by the stream.
 */
import { DomainError } from "../shared/types.js";
import type { DevicePartitioning, PartitionState } from "./partition-state.js";
import { blockedBesideSlots, choosePlacement, makeableNow, type PlacementPolicy } from "./partition-fit.js";
import type { DriverPartition, DriverPartitioning, DriverPartitionProfile, SlotPlacement } from "./partitioning-report.js";

export type PartitionGrant =
  | { kind: "EXISTING"; partition: PartitionState }
  | { kind: "CREATE"; profile: DriverPartitionProfile; placement: SlotPlacement | null };

/** The device's partitioning as its driver reports it: every partition it lists exists and is free. */
export function partitioningFromReport(report: DriverPartitioning): DevicePartitioning {
  return {
    counters: new Map(report.counters.map((c) => [c.name, c.total])),
    slots: report.slots,
    oneProfileAtATime: report.oneProfileAtATime,
    profiles: new Map(report.profiles.map((p) => [p.name, p])),
    partitions: report.partitions.map((d) => ({ profile: d.profile, uuid: d.uuid, placement: d.placement, status: "READY", holder: null, driver: d })),
  };
}

/**
 * A partition of the profile for the ARQ: a free one that exists (lowest start first), else a new
 * one at the placement the policy picks, reserved (status CREATING) until the agent made it.
 * Idempotent per ARQ: an ARQ that already holds a partition gets it back.
 */
export function allocatePartition(
  p: DevicePartitioning,
  profileName: string,
  arqUuid: string,
  policy: PlacementPolicy = "best-fit",
): { partitioning: DevicePartitioning; grant: PartitionGrant } {
  const held = p.partitions.find((part) => part.holder === arqUuid);
  if (held) {
    if (held.profile !== profileName) throw new DomainError("CONFLICT", `ARQ ${arqUuid} already holds a partition of profile ${held.profile}`);
    return { partitioning: p, grant: held.status === "CREATING" ? { kind: "CREATE", profile: profileOf(p, profileName), placement: held.placement } : { kind: "EXISTING", partition: held } };
  }
  const profile = profileOf(p, profileName);
  const free = p.partitions
    .filter((part) => part.profile === profileName && part.status === "READY" && part.holder === null)
    .sort((a, b) => (a.placement?.start ?? 0) - (b.placement?.start ?? 0))[0];
  if (free) {
    const taken = { ...free, holder: arqUuid };
    return { partitioning: replace(p, free, taken), grant: { kind: "EXISTING", partition: taken } };
  }
  const blocked = blockedBesideSlots(p, profile);
  if (blocked) throw new DomainError("CONFLICT", `no partition ${profileName} can be made: ${blocked}`);
  const needsSlots = p.slots > 0 && profile.placements.length > 0;
  const placement = needsSlots ? choosePlacement(p, profile, policy) : null;
  if (needsSlots && !placement) throw new DomainError("CONFLICT", `no partition ${profileName} can be made: none of its placements is free`);
  const made: PartitionState = { profile: profileName, uuid: null, placement, status: "CREATING", holder: arqUuid, driver: null };
  return { partitioning: { ...p, partitions: [...p.partitions, made] }, grant: { kind: "CREATE", profile, placement } };
}

/** The agent made the partition reserved for the ARQ. */
export function partitionCreated(p: DevicePartitioning, arqUuid: string, made: DriverPartition): DevicePartitioning {
  const part = p.partitions.find((x) => x.holder === arqUuid && x.status === "CREATING");
  if (!part) return p;
  return replace(p, part, { ...part, uuid: made.uuid, placement: made.placement ?? part.placement, status: "READY", driver: made });
}

/** The agent could not make it: its slots and counters are free again. */
export function partitionFailed(p: DevicePartitioning, arqUuid: string): DevicePartitioning {
  return { ...p, partitions: p.partitions.filter((x) => !(x.holder === arqUuid && x.status === "CREATING")) };
}

/**
 * The ARQ lets its partition go. keepIdle leaves it made and free for the next ARQ of its profile;
 * otherwise it is marked DESTROYING (still holding its slots until the agent destroyed it) and
 * returned as the partition to destroy. A reservation still being made is simply dropped.
 */
export function releasePartition(
  p: DevicePartitioning,
  arqUuid: string,
  keepIdle: boolean,
): { partitioning: DevicePartitioning; destroy: PartitionState | null } {
  const part = p.partitions.find((x) => x.holder === arqUuid);
  if (!part) return { partitioning: p, destroy: null };
  if (part.status === "CREATING") return { partitioning: partitionFailed(p, arqUuid), destroy: null };
  if (keepIdle) return { partitioning: replace(p, part, { ...part, holder: null }), destroy: null };
  const going: PartitionState = { ...part, holder: null, status: "DESTROYING" };
  return { partitioning: replace(p, part, going), destroy: going };
}

/** The agent destroyed the partition: its slots and counters are free. */
export function partitionDestroyed(p: DevicePartitioning, uuid: string): DevicePartitioning {
  return { ...p, partitions: p.partitions.filter((x) => x.uuid !== uuid) };
}

/** How many more partitions of the profile the ARQs could have now: free ones plus those that can be made. */
export function fitsNow(p: DevicePartitioning, profileName: string): number {
  const profile = p.profiles.get(profileName);
  if (!profile) return 0;
  const free = p.partitions.filter((x) => x.profile === profileName && x.status === "READY" && x.holder === null).length;
  return free + makeableNow(p, profile);
}

/** How many partitions of the profile are held by ARQs (made or being made). */
export function allocatedOf(p: DevicePartitioning, profileName: string): number {
  return p.partitions.filter((x) => x.profile === profileName && x.holder !== null).length;
}

function profileOf(p: DevicePartitioning, name: string): DriverPartitionProfile {
  const profile = p.profiles.get(name);
  if (!profile) throw new DomainError("CONFLICT", `the device makes no partition profile ${name} (it makes ${[...p.profiles.keys()].join(", ") || "none"})`);
  return profile;
}

function replace(p: DevicePartitioning, old: PartitionState, next: PartitionState): DevicePartitioning {
  return { ...p, partitions: p.partitions.map((x) => (x === old ? next : x)) };
}

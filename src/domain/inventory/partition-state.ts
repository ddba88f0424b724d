/** A partitionable device as the inventory model holds it: its counters, slots, profiles and partitions (partitioning.ts decides over it). */
import type { DriverPartition, DriverPartitionProfile, SlotPlacement } from "./partitioning-report.js";

export type PartitionStatus = "READY" | "CREATING" | "DESTROYING";

export interface PartitionState {
  profile: string;
  /** The partition's identity (MIG device UUID); null while it is being made. */
  uuid: string | null;
  placement: SlotPlacement | null;
  status: PartitionStatus;
  /** The ARQ that holds it, or null when it is free. */
  holder: string | null;
  /** What the driver reported of it once it exists. */
  driver: DriverPartition | null;
}

export interface DevicePartitioning {
  counters: ReadonlyMap<string, number>;
  slots: number;
  oneProfileAtATime: boolean;
  profiles: ReadonlyMap<string, DriverPartitionProfile>;
  partitions: readonly PartitionState[];
}

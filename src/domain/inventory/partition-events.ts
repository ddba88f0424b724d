/**
 * Events of the host stream for devices cut into partitions on demand (partitioning.ts holds the
 * model, partition-allocation.ts the rules). A bind that asks for a profile no free partition
 * satisfies, while the device's counters and slots allow one, reserves it and asks the host's
 * agent to make it; the bind completes when the agent answers. A released partition is destroyed
 * (unless idle partitions are kept), so its slots can be regrouped.
 */
import type { JsonObject } from "../shared/types.js";
import type { DriverPartition, DriverPartitioning, SlotPlacement } from "./partitioning-report.js";

/** What the driver reports of a partitioned device changed (profiles, counters, the partitions that exist); null: no longer partitioned. */
export interface DevicePartitioningChanged {
  type: "DevicePartitioningChanged";
  data: { hostname: string; deviceUuid: string; partitioning: DriverPartitioning | null; at: string };
}

/** What the agent needs to reach the device's partitioner: the driver's name and the device's control path. */
export interface PartitionTool {
  driverName: string | null;
  controlPath: JsonObject;
}

/** A bind reserved a partition to be made (counters and slots held from now on); the agent is asked to make it. */
export interface PartitionCreationRequested {
  type: "PartitionCreationRequested";
  data: PartitionTool & {
    hostname: string;
    deviceUuid: string;
    deployableUuid: string;
    requestId: string;
    arqUuid: string;
    instanceUuid: string;
    profile: string;
    toolId: string;
    placement: SlotPlacement | null;
    /** The ARQ's group asks for a clean after use (carried to its allocation). */
    cleanAfterUse?: true;
    at: string;
  };
}

/**
 * The agent made it. AttachHandleAdded (its handle on the profile's deployable) and
 * AttachHandleAllocated (to the ARQ that reserved it) follow in the same append.
 */
export interface PartitionCreated {
  type: "PartitionCreated";
  data: {
    hostname: string;
    deviceUuid: string;
    deployableUuid: string;
    requestId: string;
    arqUuid: string;
    partition: DriverPartition;
    handleUuid: string;
    command: string[];
    durationMs: number;
    at: string;
  };
}

/** The agent could not make it: the reservation is dropped and the bind fails with the reason. */
export interface PartitionCreationFailed {
  type: "PartitionCreationFailed";
  data: { hostname: string; deviceUuid: string; requestId: string; arqUuid: string; reason: string; command: string[] | null; durationMs: number | null; at: string };
}

/** The bind went (released, failed, timed out) before the agent answered: the reservation is dropped. */
export interface PartitionCreationAbandoned {
  type: "PartitionCreationAbandoned";
  data: { hostname: string; deviceUuid: string; requestId: string; arqUuid: string; reason: string; at: string };
}

/** A released partition is to be destroyed; it holds its slots (and is not offered) until the agent answers. */
export interface PartitionDestructionRequested {
  type: "PartitionDestructionRequested";
  data: PartitionTool & {
    hostname: string;
    deviceUuid: string;
    deployableUuid: string;
    handleUuid: string;
    requestId: string;
    uuid: string;
    toolRef: Record<string, string | number>;
    at: string;
  };
}

/** The agent destroyed it; AttachHandleRemoved follows in the same append. */
export interface PartitionDestroyed {
  type: "PartitionDestroyed";
  data: { hostname: string; deviceUuid: string; requestId: string; uuid: string; command: string[]; durationMs: number; at: string };
}

/** The agent could not destroy it: it stays, free, and is offered again. */
export interface PartitionDestructionFailed {
  type: "PartitionDestructionFailed";
  data: { hostname: string; deviceUuid: string; requestId: string; uuid: string; reason: string; command: string[] | null; durationMs: number | null; at: string };
}

/** What each profile's provider can hold now changed (partition-inventory.ts): Placement's inventory follows. */
export interface PartitionInventoryChanged {
  type: "PartitionInventoryChanged";
  data: { hostname: string; deviceUuid: string; available: Array<{ deployableUuid: string; profile: string; available: number }>; at: string };
}

export type PartitionEvent =
  | PartitionInventoryChanged
  | DevicePartitioningChanged
  | PartitionCreationRequested
  | PartitionCreated
  | PartitionCreationFailed
  | PartitionCreationAbandoned
  | PartitionDestructionRequested
  | PartitionDestroyed
  | PartitionDestructionFailed;

export const PARTITION_EVENT_TYPES = [
  "DevicePartitioningChanged",
  "PartitionInventoryChanged",
  "PartitionCreationRequested",
  "PartitionCreated",
  "PartitionCreationFailed",
  "PartitionCreationAbandoned",
  "PartitionDestructionRequested",
  "PartitionDestroyed",
  "PartitionDestructionFailed",
] as const satisfies ReadonlyArray<PartitionEvent["type"]>;

/**
 * The shape of a host's inventory tree (devices, deployables, attach handles, attributes, each
 * region's programming, each device's cleaning and partitions) and which handle is allocated to
 * which ARQ. state.ts folds it.
 */
import type { AttachHandleType, JsonObject } from "../shared/types.js";
import type { DeviceHealth } from "./health.js";
import type { DeviceTopology } from "./topology-report.js";
import type { DriverCapacity, DriverPartitioning, SlotPlacement } from "./partitioning-report.js";
import type { AttachHandleAllocated, ControlPath, DeployableAdded, DeviceDiscovered, ProgrammingBitstream, ProgrammingRequester, Taint } from "./events.js";

export interface HandleNode {
  uuid: string;
  type: AttachHandleType;
  info: JsonObject;
  /** Left the report while allocated: not offered again, removed when released. */
  lost: boolean;
  allocatedTo: { arqUuid: string; instanceUuid: string } | null;
}

export interface AttributeNode {
  uuid: string;
  value: string;
  /** The attribute it is nested under, on the same deployable; null at the top. */
  parentUuid: string | null;
}

/** A programming request of a region, while the agent works on it. */
export interface ProgrammingInFlight {
  requestId: string;
  bitstream: ProgrammingBitstream;
  requestedBy: ProgrammingRequester;
  requestedAt: string;
}

/** How the region's last closed request ended (a late report of an abandoned one is still taken). */
export interface ProgrammingClosed {
  requestId: string;
  bitstream: ProgrammingBitstream;
  outcome: "programmed" | "failed" | "abandoned";
  /** What the closing event reported (time travel shows a region's last programming from it). */
  report: ProgrammingReport;
}

export type ProgrammingReport = { reason: string | null; command: string[] | null; durationMs: number | null; late: boolean; at: string };

export type DeployableNode = Pick<
  DeployableAdded["data"],
  "name" | "numAccelerators" | "driverName" | "parentUuid" | "rootUuid" | "rpUuid" | "bitstreamId"
> & {
  uuid: string;
  /** When it was added and last changed (the events' `at`): what the tree looked like then. */
  createdAt: string;
  updatedAt: string | null;
  /** By key. */
  attributes: ReadonlyMap<string, AttributeNode>;
  /** By handle uuid, in the order first reported. */
  handles: ReadonlyMap<string, HandleNode>;
  /** The request the agent is working on; the handles allocated meanwhile are binds waiting for it. */
  programming: ProgrammingInFlight | null;
  lastProgramming: ProgrammingClosed | null;
};

export type DeviceNode = Pick<
  DeviceDiscovered["data"],
  "type" | "vendor" | "model" | "stdBoardInfo" | "vendorBoardInfo" | "controlPath" | "status"
> & {
  uuid: string;
  /** The device's other control paths ([] for a device with one). */
  additionalControlPaths: readonly ControlPath[];
  /** When it was discovered and last changed (changes, status, loss; the events' `at`). */
  createdAt: string;
  updatedAt: string | null;
  /** Left the report while some handle was allocated (the ARQs it named); removed once all are released. */
  lostArqs: readonly string[] | null;
  /** As last recorded (DeviceHealthChanged); HEALTHY until the driver reports otherwise. */
  health: DeviceHealth;
  /** As last recorded (DeviceTopologyChanged); null until the driver reports one. */
  topology: DeviceTopology | null;
  /** In the order first set; `status` is MAINTAINING while there is any (taints.ts). */
  taints: readonly Taint[];
  /** By deployable uuid. */
  deployables: ReadonlyMap<string, DeployableNode>;
  /** Cleaning before reuse and qualification (cleaning.ts). */
  cleaning: DeviceCleaningState;
  /** The amounts ARQs draw from (DeviceCapacitiesChanged; [] until the driver reports any); the draws are the allocations' (capacity-record.ts). */
  capacities: readonly DriverCapacity[];
  /** A device cut into partitions on demand: what its driver reports and the requests under way (partition-record.ts); null otherwise. */
  partitioning: DevicePartitionRecord | null;
};

/** Which handle an ARQ holds: what AttachHandleAllocated recorded. */
export type Allocation = Omit<AttachHandleAllocated["data"], "hostname" | "at">;

export interface HostState {
  hostname: string | null;
  /** By device uuid. */
  devices: ReadonlyMap<string, DeviceNode>;
  /** Deployable uuid to device uuid. */
  deviceOfDeployable: ReadonlyMap<string, string>;
  /** By ARQ uuid. */
  allocations: ReadonlyMap<string, Allocation>;
  /**
   * ARQs whose bind waited on the agent and failed, with the reason: their region's programming
   * failed or was abandoned (until their handle is released), or their partition could not be made
   * (until the ARQ's next bind).
   */
  programmingFailures: ReadonlyMap<string, string>;
  /**
   * How many events other than AttachHandleAllocated / AttachHandleReleased the stream holds.
   * Allocating and releasing never change what a report diffs to (a release that must remove a
   * lost handle or device records that removal as its own event), so while this count stays the
   * same, a report that diffed to nothing still does (see app/report-digests.ts).
   */
  inventoryChanges: number;
  /**
   * The last HostReportSettled: its report's digest and `unchanged` count, with the
   * inventoryChanges count it was recorded at (a report with that digest diffs to nothing while
   * the count is the same).
   */
  settledReport: { digest: string; unchanged: number; inventoryChanges: number } | null;
  /** The `at` of the stream's first event: when its first period began (books.ts). */
  firstAt: string | null;
  /** The latest summary (HostBooksClosed): its revision and time, where the current period began; null before the first. */
  books: { revision: number; at: string } | null;
}

/** What the device's cleaning loop knows (cleaning.ts): on every device node, as `cleaning`. */
export interface DeviceCleaningState {
  /** The operator requires a clean after every use. */
  required: boolean;
  /** A holder since the last clean asked for a clean after use (its profile group). */
  dirty: boolean;
  /** The request the agent is working on. */
  inFlight: { requestId: string; reason: string; requestedAt: string } | null;
  /** Cleaned, waiting for a healthy report. */
  qualifyingSince: string | null;
  /** Out of service until repaired. */
  failed: { reason: string; at: string } | null;
  /** How the last request ended. */
  last: CleaningOutcome | null;
  /** Requests made so far: the next request's id derives from it. */
  requests: number;
}

export interface CleaningOutcome {
  requestId: string;
  outcome: "cleaned" | "failed";
  digest: string | null;
  command: string[] | null;
  durationMs: number | null;
  reason: string | null;
  at: string;
}

/** A partitionable device's record in the host stream (partition-record.ts folds it). */
export interface PendingCreation {
  requestId: string;
  arqUuid: string;
  instanceUuid: string;
  profile: string;
  placement: SlotPlacement | null;
  deployableUuid: string;
  cleanAfterUse: boolean;
  at: string;
}

export interface PendingDestruction {
  requestId: string;
  uuid: string;
  handleUuid: string;
  deployableUuid: string;
  at: string;
}

export interface DevicePartitionRecord {
  reported: DriverPartitioning;
  /** By ARQ uuid. */
  creations: ReadonlyMap<string, PendingCreation>;
  /** By partition uuid. */
  destructions: ReadonlyMap<string, PendingDestruction>;
  /** How many requests the device's partitions have had: the next one's id derives from it. */
  requests: number;
  /** By deployable uuid: how many of its profile the device can hold now, as last recorded (partition-inventory.ts). */
  available: ReadonlyMap<string, number>;
}

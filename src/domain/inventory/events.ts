/**
 * Events of stream `host-<hostname>`: the host's device tree and attach-handle allocation.
 * Ids are deterministic (see ids.ts) so that they are stable across reports and replays.
 */
import type { TaintEffect } from "../shared/tolerations.js";
import type { AttachHandleType, DeviceStatus, DeviceType, JsonObject } from "../shared/types.js";
import type { CleaningEvent } from "./cleaning-events.js";
import type { PartitionEvent } from "./partition-events.js";

export type * from "./cleaning-events.js";
export type * from "./partition-events.js";
import type { DeviceHealth } from "./health.js";
import type { DeviceTopology } from "./topology-report.js";
import type { DriverCapacity } from "./partitioning-report.js";

export interface ControlPath {
  uuid: string;
  /** "PCI" */
  type: string;
  /** For PCI: {domain,bus,device,function}. */
  info: JsonObject;
}

export interface DeviceDiscovered {
  type: "DeviceDiscovered";
  data: {
    hostname: string;
    deviceUuid: string;
    type: DeviceType;
    vendor: string;
    model: string;
    stdBoardInfo: JsonObject | null;
    vendorBoardInfo: JsonObject | null;
    controlPath: ControlPath;
    /** The device's other control paths, in report order (absent in events written before devices could have several). */
    additionalControlPaths?: ControlPath[];
    status: DeviceStatus;
    at: string;
  };
}
/** Only the fields present changed. */
export interface DeviceChanged {
  type: "DeviceChanged";
  data: {
    hostname: string;
    deviceUuid: string;
    changes: Partial<{
      type: DeviceType;
      vendor: string;
      model: string;
      stdBoardInfo: JsonObject | null;
      vendorBoardInfo: JsonObject | null;
      /** The whole new list. */
      additionalControlPaths: ControlPath[];
    }>;
    at: string;
  };
}
export interface DeviceRemoved {
  type: "DeviceRemoved";
  data: { hostname: string; deviceUuid: string; at: string };
}
/**
 * The device left the report while some of its attach handles were allocated (Cyborg bug 5.5 fixed):
 * it stays in the tree, marked lost, until the last handle is released; then DeviceRemoved follows.
 */
export interface DeviceLost {
  type: "DeviceLost";
  data: { hostname: string; deviceUuid: string; arqUuids: string[]; at: string };
}
/**
 * Written before devices carried taints: MAINTAINING is read as the maintenance taint
 * (taints.ts), ENABLED as its removal. New decisions write DeviceTainted / DeviceUntainted.
 */
export interface DeviceStatusChanged {
  type: "DeviceStatusChanged";
  data: { hostname: string; deviceUuid: string; status: DeviceStatus; at: string };
}
/**
 * The device's health as its driver reported it, written only when it tells another story than
 * the recorded one (health.ts, sameHealth) or crosses a health rule's threshold.
 */
export interface DeviceHealthChanged {
  type: "DeviceHealthChanged";
  data: { hostname: string; deviceUuid: string; health: DeviceHealth; at: string };
}
/**
 * Where the device sits on its host (topology-report.ts), as its driver reported it; written only
 * when it differs from the recorded one (topology.ts).
 */
export interface DeviceTopologyChanged {
  type: "DeviceTopologyChanged";
  data: { hostname: string; deviceUuid: string; topology: DeviceTopology; at: string };
}

/**
 * The amounts the device's driver reports that ARQs draw from (a NIC port's bandwidth:
 * partitioning-report.ts's DriverCapacity); written only when they differ from the recorded ones
 * (capacity-record.ts). Empty: the device no longer reports any.
 */
export interface DeviceCapacitiesChanged {
  type: "DeviceCapacitiesChanged";
  data: { hostname: string; deviceUuid: string; capacities: DriverCapacity[]; at: string };
}

/** A taint on a device (taints.ts): one per (key, effect). */
export interface Taint {
  /** e.g. "cyborg.openstack.org/maintenance", "cyborg.openstack.org/health". */
  key: string;
  /** Free text, may be "". */
  value: string;
  effect: TaintEffect;
  /** The principal (an operator), "health:<rule>", or "cyborg-rest" for Cyborg's disable. */
  by: string;
  /** A sentence a person reads. */
  reason: string;
  /** ISO time of the taint. */
  at: string;
}
/**
 * The device carries `taint` from now on, in place of any of the same key and effect. `status`:
 * Cyborg's status of the device after it (MAINTAINING), for read models that fold no state.
 */
export interface DeviceTainted {
  type: "DeviceTainted";
  data: { hostname: string; deviceUuid: string; taint: Taint; status: DeviceStatus; at: string };
}
/** The taint of `key` and `effect` is gone. `status`: Cyborg's status after it (ENABLED once none is left). */
export interface DeviceUntainted {
  type: "DeviceUntainted";
  data: { hostname: string; deviceUuid: string; key: string; effect: TaintEffect; by: string; reason: string; status: DeviceStatus; at: string };
}

export interface DeployableAdded {
  type: "DeployableAdded";
  data: {
    hostname: string;
    deviceUuid: string;
    deployableUuid: string;
    name: string;
    numAccelerators: number;
    driverName: string | null;
    parentUuid: string | null;
    rootUuid: string;
    /** uuid3(NAMESPACE_DNS, name), as Cyborg. */
    rpUuid: string;
    bitstreamId: string | null;
    at: string;
  };
}
export interface DeployableChanged {
  type: "DeployableChanged";
  data: {
    hostname: string;
    deployableUuid: string;
    /**
     * parentUuid and rootUuid (added): a reported deployable moved under another parent.
     * bitstreamId: what the region runs, set by programming (programming.ts); null once unknown.
     */
    changes: Partial<{ numAccelerators: number; driverName: string | null; parentUuid: string | null; rootUuid: string; bitstreamId: string | null }>;
    at: string;
  };
}
export interface DeployableRemoved {
  type: "DeployableRemoved";
  data: { hostname: string; deviceUuid: string; deployableUuid: string; at: string };
}

export interface AttributeSet {
  type: "AttributeSet";
  data: {
    hostname: string;
    deployableUuid: string;
    attributeUuid: string;
    key: string;
    value: string;
    /** The attribute it is nested under (parent_attribute_id); absent or null at the top. */
    parentAttributeUuid?: string | null;
    at: string;
  };
}
export interface AttributeRemoved {
  type: "AttributeRemoved";
  data: { hostname: string; deployableUuid: string; attributeUuid: string; key: string; at: string };
}

export interface AttachHandleAdded {
  type: "AttachHandleAdded";
  data: {
    hostname: string;
    deviceUuid: string;
    deployableUuid: string;
    handleUuid: string;
    handleType: AttachHandleType;
    info: JsonObject;
    at: string;
  };
}
export interface AttachHandleChanged {
  type: "AttachHandleChanged";
  data: { hostname: string; deployableUuid: string; handleUuid: string; handleType: AttachHandleType; at: string };
}
export interface AttachHandleRemoved {
  type: "AttachHandleRemoved";
  data: { hostname: string; deployableUuid: string; handleUuid: string; at: string };
}
/** The handle left the report while allocated: kept (marked lost) until released, then removed. */
export interface AttachHandleLost {
  type: "AttachHandleLost";
  data: { hostname: string; deployableUuid: string; handleUuid: string; arqUuid: string; at: string };
}

/** An amount of a capacity's resource class an ARQ draws (capacity-record.ts). */
export interface CapacityDraw {
  resourceClass: string;
  amount: number;
}

export interface AttachHandleAllocated {
  type: "AttachHandleAllocated";
  data: {
    hostname: string;
    deviceUuid: string;
    deployableUuid: string;
    rpUuid: string;
    handleUuid: string;
    handleType: AttachHandleType;
    info: JsonObject;
    arqUuid: string;
    instanceUuid: string;
    /** The ARQ's profile group asks for a clean after use (accel:clean_after_use); absent when it does not. */
    cleanAfterUse?: true;
    /**
     * The amounts the ARQ draws from the device's capacities with this handle (its group's amount
     * keys: shared/amount-keys.ts), released with it; absent when it draws none.
     */
    draws?: CapacityDraw[];
    at: string;
  };
}
export interface AttachHandleReleased {
  type: "AttachHandleReleased";
  data: { hostname: string; deployableUuid: string; handleUuid: string; arqUuid: string; at: string };
}

/** What a region is asked to run: the catalogue's bitstream, as the agent needs it. */
export interface ProgrammingBitstream {
  id: string;
  name: string;
  /** `<algorithm>:<hex>`: the agent checks the download against it before the driver sees it. */
  checksum: string;
  size: number;
  functionId: string | null;
}

/** Who asked: a bind that needs the bitstream, or an operator (programDeployable). */
export type ProgrammingRequester = { kind: "bind"; arqUuid: string; instanceUuid: string } | { kind: "operator"; principal: string };

/** A region (deployable) is to be programmed by the host's agent; binds that need it wait. */
export interface RegionProgrammingRequested {
  type: "RegionProgrammingRequested";
  data: {
    hostname: string;
    deployableUuid: string;
    requestId: string;
    bitstream: ProgrammingBitstream;
    requestedBy: ProgrammingRequester;
    /** What the region ran before (null: unknown). */
    previousBitstreamId: string | null;
    at: string;
  };
}
/**
 * The agent programmed the region. Followed in the same append by DeployableChanged (bitstreamId)
 * and the function-trait attributes. `late`: the request had been abandoned; the region runs the
 * bitstream now, but the binds that waited have failed and stay failed.
 */
export interface RegionProgrammed {
  type: "RegionProgrammed";
  data: {
    hostname: string;
    deployableUuid: string;
    requestId: string;
    bitstream: ProgrammingBitstream;
    /** The driver's command line, as run. */
    command: string[];
    durationMs: number;
    /** The binds that waited for it (their handles are on the region): they complete now. */
    arqUuids: string[];
    late: boolean;
    at: string;
  };
}
/**
 * The agent could not program the region. `command` null: the driver never ran (download or
 * checksum failed), so the region is unchanged; otherwise its bitstream is unknown from now on.
 */
export interface RegionProgrammingFailed {
  type: "RegionProgrammingFailed";
  data: {
    hostname: string;
    deployableUuid: string;
    requestId: string;
    bitstreamId: string;
    reason: string;
    command: string[] | null;
    durationMs: number | null;
    /** The binds that waited for it: they fail with the reason. */
    arqUuids: string[];
    late: boolean;
    at: string;
  };
}
/** No result within BIND_TIMEOUT_S: the request is closed, the region's bitstream is unknown. */
export interface RegionProgrammingAbandoned {
  type: "RegionProgrammingAbandoned";
  data: { hostname: string; deployableUuid: string; requestId: string; bitstreamId: string; reason: string; arqUuids: string[]; at: string };
}

/**
 * The report that made the host's last inventory change diffs to nothing against the state it
 * left: an agent that sends this digest again (confirmHostInventory) need not send the report,
 * even to a process that did not take it (another replica, or this one after a restart), while
 * the host records nothing but allocations and releases. Written in the same append as the change.
 */
export interface HostReportSettled {
  type: "HostReportSettled";
  /** digest: the report's (digest.ts); unchanged: the devices it reported that the host knows. */
  data: { hostname: string; digest: string; unchanged: number; at: string };
}

/**
 * Closing the books (books.ts): the host's whole state as the decider folds it, encoded as JSON
 * (maps as lists of entries, in their order). It starts a new period of the stream: a host is
 * folded from its latest summary, and the events before it may leave the live log (retention).
 * `revision`: the summary's own revision in its stream.
 */
export interface HostBooksClosed {
  type: "HostBooksClosed";
  data: { hostname: string; revision: number; state: unknown; at: string };
}

export type InventoryEvent =
  | HostReportSettled
  | HostBooksClosed
  | DeviceDiscovered
  | DeviceChanged
  | DeviceRemoved
  | DeviceLost
  | DeviceStatusChanged
  | DeviceHealthChanged
  | DeviceTopologyChanged
  | DeviceCapacitiesChanged
  | DeviceTainted
  | DeviceUntainted
  | DeployableAdded
  | DeployableChanged
  | DeployableRemoved
  | AttributeSet
  | AttributeRemoved
  | AttachHandleAdded
  | AttachHandleChanged
  | AttachHandleRemoved
  | AttachHandleLost
  | AttachHandleAllocated
  | AttachHandleReleased
  | RegionProgrammingRequested
  | RegionProgrammed
  | RegionProgrammingFailed
  | RegionProgrammingAbandoned
  | CleaningEvent
  | PartitionEvent;

/**
 * Events of stream `host-<hostname>`: the host's device tree and attach-handle allocation.
 * Ids are deterministic (see ids.ts) so that they are stable across reports and replays.
 */
import type { AttachHandleType, DeviceStatus, DeviceType, JsonObject } from "../shared/types.js";

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
    changes: Partial<{ type: DeviceType; vendor: string; model: string; stdBoardInfo: JsonObject | null; vendorBoardInfo: JsonObject | null }>;
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
export interface DeviceStatusChanged {
  type: "DeviceStatusChanged";
  data: { hostname: string; deviceUuid: string; status: DeviceStatus; at: string };
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
    /** parentUuid and rootUuid (added): a reported deployable moved under another parent. */
    changes: Partial<{ numAccelerators: number; driverName: string | null; parentUuid: string | null; rootUuid: string }>;
    at: string;
  };
}
export interface DeployableRemoved {
  type: "DeployableRemoved";
  data: { hostname: string; deviceUuid: string; deployableUuid: string; at: string };
}

export interface AttributeSet {
  type: "AttributeSet";
  data: { hostname: string; deployableUuid: string; attributeUuid: string; key: string; value: string; at: string };
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
    at: string;
  };
}
export interface AttachHandleReleased {
  type: "AttachHandleReleased";
  data: { hostname: string; deployableUuid: string; handleUuid: string; arqUuid: string; at: string };
}

export type InventoryEvent =
  | DeviceDiscovered
  | DeviceChanged
  | DeviceRemoved
  | DeviceLost
  | DeviceStatusChanged
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
  | AttachHandleReleased;

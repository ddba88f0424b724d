/**
 * A host's devices and attach handles in the shapes the API answers: the device-tree read model
 * writes them (each added device and handle starts as the view of its new node) and time travel
 * builds them from the host's state folded then (src/audit/past-views.ts), both with these functions.
 */
import type { DeviceNode, HandleNode } from "../../src/domain/inventory/host-tree.js";
import type { DeviceStatus, DeviceType, JsonObject } from "../../src/domain/shared/types.js";
import type { DeviceHealth } from "../../src/domain/inventory/health.js";

export type DeviceView = {
  uuid: string;
  type: DeviceType;
  vendor: string;
  model: string;
  hostname: string;
  status: DeviceStatus;
  stdBoardInfo: JsonObject | null;
  vendorBoardInfo: JsonObject | null;
  controlPath: { uuid: string; type: string; info: JsonObject };
  /** The device's other control paths (absent in views written before devices could have several). */
  additionalControlPaths?: ReadonlyArray<{ uuid: string; type: string; info: JsonObject }>;
  createdAt: string;
  updatedAt: string | null;
  /** Gone from the host's report while one of its handles is allocated. */
  lost: boolean;
  /** As last recorded (absent in views written before health was reported: read it as OK). */
  health?: DeviceHealth;
};

export type AttachHandleView = {
  uuid: string;
  type: string;
  info: JsonObject;
  inUse: boolean;
  /** The ARQ holding the handle, while in use. */
  arqUuid: string | null;
  deployableUuid: string;
  deviceUuid: string;
  hostname: string;
  lost: boolean;
};

export function deviceView(hostname: string, d: Omit<DeviceNode, "deployables">): DeviceView {
  return {
    uuid: d.uuid,
    type: d.type,
    vendor: d.vendor,
    model: d.model,
    hostname,
    status: d.status,
    stdBoardInfo: d.stdBoardInfo,
    vendorBoardInfo: d.vendorBoardInfo,
    controlPath: d.controlPath,
    additionalControlPaths: d.additionalControlPaths,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    lost: d.lostArqs !== null,
    health: d.health,
  };
}

/** The handle `h` of deployable `deployableUuid` on device `deviceUuid` of `hostname`. */
export function handleView(at: { hostname: string; deviceUuid: string; deployableUuid: string }, h: HandleNode): AttachHandleView {
  return {
    uuid: h.uuid,
    type: h.type,
    info: h.info,
    inUse: h.allocatedTo !== null,
    arqUuid: h.allocatedTo?.arqUuid ?? null,
    deployableUuid: at.deployableUuid,
    deviceUuid: at.deviceUuid,
    hostname: at.hostname,
    lost: h.lost,
  };
}

/** What the application returns to the GraphQL layer and the binder. */
import type { Arq, ArqStreamState } from "../domain/arqs/decider.js";
import type { DeviceProfile } from "../domain/device-profiles/decider.js";
import type { ProfileGroup } from "../domain/device-profiles/events.js";
import type { ArqState, AttachHandleType, JsonObject } from "../domain/shared/types.js";

export interface ArqView {
  uuid: string;
  state: ArqState;
  deviceProfileName: string;
  deviceProfileUuid: string;
  deviceProfileGroupId: number;
  group: ProfileGroup;
  hostname: string | null;
  deviceRpUuid: string | null;
  instanceUuid: string | null;
  projectId: string | null;
  /** The attach fields are set only in state BOUND (as Cyborg), null otherwise. */
  attachHandleType: AttachHandleType | null;
  attachHandleUuid: string | null;
  attachHandleInfo: JsonObject | null;
  /** Why the last bind failed (BIND_FAILED), null otherwise. */
  bindFailureReason: string | null;
  /** The ARQ stream's revision. */
  revision: number;
  createdAt: string;
  updatedAt: string | null;
}

export interface DeviceProfileView {
  uuid: string;
  name: string;
  description: string | null;
  groups: ProfileGroup[];
  createdAt: string;
  /** Profiles are immutable: always null. */
  updatedAt: string | null;
}

export interface InventoryReportView {
  hostname: string;
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
  /** The host stream's revision after the report, -1 if the stream does not exist. */
  revision: number;
  /** The report's digest (domain/inventory/digest.ts), for confirmHostInventory; null where not known. */
  digest: string | null;
}

export function toArqView(arq: Arq, revision: number): ArqView {
  const bound = arq.state === "BOUND" ? arq.attachment : null;
  return {
    uuid: arq.uuid,
    state: arq.state,
    deviceProfileName: arq.deviceProfileName,
    deviceProfileUuid: arq.deviceProfileUuid,
    deviceProfileGroupId: arq.deviceProfileGroupId,
    group: { ...arq.group },
    hostname: arq.hostname,
    deviceRpUuid: arq.deviceRpUuid,
    instanceUuid: arq.instanceUuid,
    projectId: arq.projectId,
    attachHandleType: bound?.handleType ?? null,
    attachHandleUuid: bound?.handleUuid ?? null,
    attachHandleInfo: bound ? { ...bound.handleInfo } : null,
    bindFailureReason: arq.state === "BIND_FAILED" ? arq.bindFailureReason : null,
    revision,
    createdAt: arq.createdAt,
    updatedAt: arq.updatedAt,
  };
}

export function arqViewOf(state: ArqStreamState, revision: number): ArqView | null {
  return state.status === "live" ? toArqView(state.arq, revision) : null;
}

export function toDeviceProfileView(p: DeviceProfile): DeviceProfileView {
  return {
    uuid: p.uuid,
    name: p.name,
    description: p.description,
    groups: p.groups.map((g) => ({ ...g })),
    createdAt: p.createdAt,
    updatedAt: null,
  };
}

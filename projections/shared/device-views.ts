/**
 * A host's devices and attach handles in the shapes the API answers: the device-tree read model
 * writes them (each added device and handle starts as the view of its new node) and time travel
 * builds them from the host's state folded then (src/audit/past-views.ts), both with these functions.
 */
import type { CleaningOutcome } from "../../src/domain/inventory/host-tree.js";
import type { Taint } from "../../src/domain/inventory/events.js";
import type { DeviceNode, HandleNode } from "../../src/domain/inventory/host-tree.js";
import type { TaintEffect } from "../../src/domain/shared/tolerations.js";
import type { DeviceStatus, DeviceType, JsonObject } from "../../src/domain/shared/types.js";
import type { DeviceHealth } from "../../src/domain/inventory/health.js";
import type { DeviceTopology } from "../../src/domain/inventory/topology-report.js";

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
  /** Where it sits on its host, as last reported (topology-report.ts); null or absent when never reported. */
  topology?: DeviceTopology | null;
  /** Ordered by when each was set, then key and effect. */
  taints: Taint[];
} & Partial<DeviceCleaningView>;

/** The device's cleaning loop (absent in views written before it: nothing to say). */
export type DeviceCleaningView = {
  cleaningRequired: boolean;
  cleaningInFlight: { requestId: string; reason: string; requestedAt: string } | null;
  qualifyingSince: string | null;
  failure: { reason: string; at: string } | null;
  lastCleaning: CleaningOutcome | null;
};

/**
 * The device doc keeps each taint in a field of its own, `taint:<key> <effect>` (one per key and
 * effect, as on the device), so that a projection sets or removes one without knowing the others.
 */
export const taintField = (key: string, effect: TaintEffect): string => `taint:${key} ${effect}`;
const TAINT_FIELD_PREFIX = "taint:";

/** The doc's fields, written as they are, without its taints (written one by one: taintField). */
export function deviceDocFields(view: DeviceView): Omit<DeviceView, "taints"> & Record<string, unknown> {
  const { taints, ...rest } = view;
  const fields: Record<string, unknown> = { ...rest };
  for (const t of taints) fields[taintField(t.key, t.effect)] = t;
  return fields as Omit<DeviceView, "taints"> & Record<string, unknown>;
}

/** A device doc as stored, as the view: its taint fields gathered into `taints`. */
export function deviceViewOfDoc(doc: Record<string, unknown>): DeviceView {
  const view: Record<string, unknown> = {};
  const taints: Taint[] = [];
  for (const [field, value] of Object.entries(doc)) {
    if (field.startsWith(TAINT_FIELD_PREFIX)) taints.push(value as Taint);
    else view[field] = value;
  }
  taints.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : a.effect < b.effect ? -1 : a.effect > b.effect ? 1 : 0));
  return { ...(view as Omit<DeviceView, "taints">), taints };
}

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
  /** When the ARQ holding it took it (absent in handles written before this was kept). */
  heldSince?: string | null;
};

export function deviceView(hostname: string, d: Omit<DeviceNode, "deployables" | "cleaning"> & Partial<Pick<DeviceNode, "cleaning">>): DeviceView {
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
    topology: d.topology,
    taints: [...d.taints],
    ...(d.cleaning ? cleaningView(d.cleaning) : {}),
  };
}

export function cleaningView(c: DeviceNode["cleaning"]): DeviceCleaningView {
  return { cleaningRequired: c.required, cleaningInFlight: c.inFlight, qualifyingSince: c.qualifyingSince, failure: c.failed, lastCleaning: c.last };
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

/**
 * Our read-model views as Cyborg's JSON, field by field (cyborg-reference 1.3). Pure functions:
 * the handlers pass the public URL for the links.
 *
 * Cyborg exposes internal integer ids (a deployable's parent_id, root_id and device_id, an
 * attribute's deployable_id); there are none here, so those fields carry the uuid of the object
 * they point at (docs/api.md, "Where we differ from Cyborg on purpose").
 */
import type { ArqView, DeployableView, DeviceProfileView, DeviceView } from "./reads.js";
import { ARQ_STATE, bookmarkLink, DEVICE_STATUS, pythonStrTime, selfLink, wsmeTime, type Link } from "./format.js";
import type { Microversion } from "./microversion.js";
import { HEALTHY } from "../../domain/inventory/health.js";
import type { DeviceLifecycleState } from "../../domain/inventory/device-lifecycle.js";
import type { DeviceHolderView } from "../device-loop.js";

/** What the shapes read of an ARQ: the read model's view and the application's answer both have it. */
export type ArqFields = Pick<
  ArqView,
  | "uuid"
  | "state"
  | "deviceProfileName"
  | "deviceProfileGroupId"
  | "hostname"
  | "deviceRpUuid"
  | "instanceUuid"
  | "projectId"
  | "attachHandleType"
  | "attachHandleUuid"
  | "attachHandleInfo"
  | "bindFailureReason"
  | "createdAt"
  | "updatedAt"
> &
  Partial<Pick<ArqView, "eviction">>;
export type ProfileFields = Omit<DeviceProfileView, "position">;

export interface CyborgArq {
  uuid: string;
  state: string;
  device_profile_name: string;
  device_profile_group_id: number;
  hostname: string | null;
  device_rp_uuid: string | null;
  instance_uuid: string | null;
  project_id: string | null;
  attach_handle_type: string;
  attach_handle_uuid: string | null;
  attach_handle_info: Record<string, string>;
  /** Why the bind failed, in BIND_FAILED (null otherwise); not in Cyborg, which keeps it in its logs. */
  bind_failure_reason: string | null;
  created_at: string | null;
  updated_at: string | null;
  links: Link[];
  /** Beside Cyborg's fields, only while the ARQ holds a device with a NoExecute taint: the notice to move. */
  eviction?: { device_uuid: string; taint_key: string; reason: string; deadline: string; requested_at: string };
}

/** Attach-handle data only in Bound ("" / null / {} otherwise), its info as strings. */
export function arqShape(a: ArqFields, publicUrl: string): CyborgArq {
  const bound = a.state === "BOUND";
  return {
    uuid: a.uuid,
    state: ARQ_STATE[a.state],
    device_profile_name: a.deviceProfileName,
    device_profile_group_id: a.deviceProfileGroupId,
    hostname: a.hostname,
    device_rp_uuid: a.deviceRpUuid,
    instance_uuid: a.instanceUuid,
    project_id: a.projectId,
    attach_handle_type: bound ? (a.attachHandleType ?? "") : "",
    attach_handle_uuid: bound ? a.attachHandleUuid : null,
    attach_handle_info: bound && a.attachHandleInfo ? stringValues(a.attachHandleInfo) : {},
    bind_failure_reason: a.state === "BIND_FAILED" ? a.bindFailureReason : null,
    created_at: wsmeTime(a.createdAt),
    updated_at: wsmeTime(a.updatedAt),
    links: [selfLink(publicUrl, "accelerator_requests", a.uuid)],
    ...(a.eviction ? { eviction: evictionShape(a.eviction) } : {}),
  };
}

function evictionShape(e: NonNullable<ArqView["eviction"]>): NonNullable<CyborgArq["eviction"]> {
  return { device_uuid: e.deviceUuid, taint_key: e.taintKey, reason: e.reason, deadline: e.deadline, requested_at: e.requestedAt };
}

/** A device profile as lists and creation give it (WSME timestamps). */
export function deviceProfileShape(p: ProfileFields, publicUrl: string) {
  return {
    uuid: p.uuid,
    name: p.name,
    description: p.description,
    groups: p.groups.map((g) => ({ ...g })),
    created_at: wsmeTime(p.createdAt),
    updated_at: wsmeTime(p.updatedAt),
    links: [selfLink(publicUrl, "device_profiles", p.uuid)],
  };
}

/** A device profile as GET /device_profiles/{id} gives it: Python str() timestamps ("None" when unset). */
export function deviceProfileOneShape(p: ProfileFields, publicUrl: string) {
  return { ...deviceProfileShape(p, publicUrl), created_at: pythonStrTime(p.createdAt), updated_at: pythonStrTime(p.updatedAt) };
}

/** What the device API adds beside Cyborg's fields: the health loop as GraphQL's Device shows it. */
export interface DeviceLoopFields {
  state: DeviceLifecycleState;
  holders: DeviceHolderView[];
}

/** `status` only from 2.3; `health`, `state`, `taints` and `holders` are cyborg-es additions after Cyborg's fields. */
export function deviceShape(d: DeviceView, loop: DeviceLoopFields, publicUrl: string, version: Microversion) {
  const health = d.health ?? HEALTHY;
  return {
    uuid: d.uuid,
    type: d.type,
    vendor: d.vendor,
    model: d.model,
    std_board_info: jsonString(d.stdBoardInfo),
    vendor_board_info: jsonString(d.vendorBoardInfo),
    hostname: d.hostname,
    ...(version >= 3 ? { status: DEVICE_STATUS[d.status] } : {}),
    created_at: wsmeTime(d.createdAt),
    updated_at: wsmeTime(d.updatedAt),
    links: [selfLink(publicUrl, "devices", d.uuid)],
    health: { status: health.status, reasons: health.reasons.map((r) => ({ code: r.code, message: r.message, count: r.count ?? null })) },
    state: loop.state.toLowerCase(),
    taints: d.taints.map((t) => ({ key: t.key, value: t.value, effect: t.effect, by: t.by, reason: t.reason, at: t.at })),
    holders: loop.holders.map((h) => ({
      arq_uuid: h.arqUuid,
      instance_uuid: h.instanceUuid,
      since: h.since,
      eviction: h.eviction ? evictionShape(h.eviction) : null,
    })),
  };
}

/** `attributes_list` is a JSON string of single-key objects, as Python's json.dumps writes it. */
export function deployableShape(d: DeployableView, publicUrl: string) {
  return {
    uuid: d.uuid,
    parent_id: d.parentUuid,
    root_id: d.rootUuid === d.uuid ? null : d.rootUuid,
    name: d.name,
    num_accelerators: d.numAccelerators,
    device_id: d.deviceUuid,
    attributes_list: `[${d.attributes.map((a) => `{${JSON.stringify(a.key)}: ${JSON.stringify(a.value)}}`).join(", ")}]`,
    rp_uuid: d.rpUuid,
    driver_name: d.driverName,
    bitstream_id: d.bitstreamId,
    created_at: wsmeTime(d.createdAt),
    updated_at: wsmeTime(d.updatedAt),
    links: [selfLink(publicUrl, "deployables", d.uuid), bookmarkLink(publicUrl, "deployables", d.uuid)],
  };
}

export type DeployableAttribute = DeployableView["attributes"][number];

/** The read model keeps no time per attribute: an attribute shows its deployable's timestamps. */
export function attributeShape(a: DeployableAttribute, d: DeployableView, publicUrl: string) {
  return {
    uuid: a.uuid,
    deployable_id: d.uuid,
    key: a.key,
    value: a.value,
    created_at: wsmeTime(d.createdAt),
    updated_at: wsmeTime(d.updatedAt),
    links: [selfLink(publicUrl, "attributes", a.uuid)],
  };
}

function stringValues(o: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) out[k] = typeof v === "string" ? v : JSON.stringify(v);
  return out;
}

const jsonString = (v: unknown): string | null => (v === null || v === undefined ? null : typeof v === "string" ? v : JSON.stringify(v));

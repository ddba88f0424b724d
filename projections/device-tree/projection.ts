/**
 * device-tree: every host's devices, their deployables (with attributes) and attach handles.
 *
 * Keys (all under the hash tag `{device-tree}`):
 *   :device:<uuid>                 hash  uuid type vendor model hostname status stdBoardInfo
 *                                        vendorBoardInfo controlPath{uuid,type,info}
 *                                        additionalControlPaths[{uuid,type,info}] createdAt updatedAt lost
 *                                        taint:<key> <effect> (one field per taint: device-views.ts)
 *   :devices                       zset  device uuids by the position that discovered them
 *   :devices-by-host|type|vendor|status        family (hash uuid -> value) and
 *   :devices-by-<f>:<value>        zset  the devices with that value, in discovery order
 *   :deployable:<uuid>, :attrs:<uuid>, :attr-order:<uuid>   see shared/deployables.ts
 *   :deployables                   zset  every deployable uuid by the position that added it
 *   :deployables-of:<device>       zset  the same, per device
 *   :children-by-parent            family (hash deployable -> parent uuid) and
 *   :children-by-parent:<parent>   zset  child deployables in the order they were added
 *   :handle:<uuid>                 hash  uuid type info inUse arqUuid deployableUuid deviceUuid hostname lost
 *   :handles-of:<deployable>       zset  handle uuids by the position that added them
 *   :changed-hosts                 zset  hostnames by the position of the last event on their stream (shared/changed-hosts.ts)
 *
 * Removal events are expected bottom-up (handles, deployables, then the device), as the host
 * decider emits them; each removes only its own keys.
 */
import type { InventoryEvent } from "../../src/domain/events.js";
import type { RecordedEvent, Recorded } from "../../src/infra/eventstore/port.js";
import type { Write } from "../../src/infra/readstore/port.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import { initialCleaning } from "../../src/domain/inventory/cleaning.js";
import { CLEANING_EVENT_TYPES, type CleaningEvent } from "../../src/domain/inventory/cleaning-events.js";
import { HEALTHY } from "../../src/domain/inventory/health.js";
import { markingHost } from "../shared/changed-hosts.js";
import { DEPLOYABLE_EVENTS, deployableWrites } from "../shared/deployables.js";
import { deviceDocFields, deviceView, handleView, taintField } from "../shared/device-views.js";
import { indexFamilies, keys, score } from "../shared/keys.js";
import { MAINTENANCE_TAINT_KEY } from "../../src/domain/inventory/taints.js";

export const name = "device-tree";
export const k = keys(name);

export const DEVICE_FAMILIES = { hostname: "devices-by-host", type: "devices-by-type", vendor: "devices-by-vendor", status: "devices-by-status" } as const;
const { orderKey: ORDER_KEY, file: fileDevice } = indexFamilies(k, DEVICE_FAMILIES, "devices");
const CHILDREN_KEY = k("children-by-parent");
const DEPLOYABLES_KEY = k("deployables");

const fileChild = (deployableUuid: string, parentUuid: string | null): Write => ({
  op: "index",
  index: CHILDREN_KEY,
  member: deployableUuid,
  value: parentUuid,
  order: DEPLOYABLES_KEY,
});

export const eventTypes = [
  "DeviceDiscovered",
  "DeviceChanged",
  "DeviceStatusChanged",
  "DeviceHealthChanged",
  "DeviceTopologyChanged",
  "DeviceTainted",
  "DeviceUntainted",
  "DeviceLost",
  "DeviceRemoved",
  ...CLEANING_EVENT_TYPES,
  ...DEPLOYABLE_EVENTS,
  "AttachHandleAdded",
  "AttachHandleChanged",
  "AttachHandleLost",
  "AttachHandleRemoved",
  "AttachHandleAllocated",
  "AttachHandleReleased",
] as const;

export function project(event: RecordedEvent): Write[] {
  return markingHost(k, event, projectInventory(event));
}

function projectInventory(event: RecordedEvent): Write[] {
  const e = event as Recorded<InventoryEvent>;
  switch (e.type) {
    case "DeviceDiscovered":
    case "DeviceChanged":
    case "DeviceStatusChanged":
    case "DeviceHealthChanged":
    case "DeviceTopologyChanged":
    case "DeviceTainted":
    case "DeviceUntainted":
    case "DeviceLost":
    case "DeviceRemoved":
      return projectDevice(e);
    case "DeviceCleaningRequirementSet":
    case "DeviceCleaningRequested":
    case "DeviceCleaned":
    case "DeviceCleaningFailed":
    case "DeviceQualified":
    case "DeviceFailed":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { ...cleaningFields(e), updatedAt: e.data.at } }];
    case "DeployableAdded":
    case "DeployableChanged":
    case "DeployableRemoved":
    case "AttributeSet":
    case "AttributeRemoved":
      return projectDeployable(e);
    default:
      return projectHandle(e);
  }
}

type DeviceEvent = Extract<
  InventoryEvent,
  { type: "DeviceDiscovered" | "DeviceChanged" | "DeviceStatusChanged" | "DeviceHealthChanged" | "DeviceTopologyChanged" | "DeviceTainted" | "DeviceUntainted" | "DeviceLost" | "DeviceRemoved" }
>;
type DeployableEvent = Extract<InventoryEvent, { type: (typeof DEPLOYABLE_EVENTS)[number] }>;

/** The device doc, its place in the device order and in the device families. */
function projectDevice(e: Recorded<DeviceEvent>): Write[] {
  switch (e.type) {
    case "DeviceDiscovered": {
      const d = e.data;
      const { deviceUuid, at, hostname, additionalControlPaths, ...fields } = d;
      const node = { uuid: deviceUuid, ...fields, additionalControlPaths: additionalControlPaths ?? [], createdAt: at, updatedAt: null, lostArqs: null, cleaning: initialCleaning(), health: HEALTHY, topology: null, taints: [], capacities: [], partitioning: null };
      return [
        { op: "put", key: k("device", deviceUuid), fields: deviceDocFields(deviceView(hostname, node)) },
        { op: "zadd", key: ORDER_KEY, member: d.deviceUuid, score: score(e.position), nx: true },
        fileDevice(d.deviceUuid, "hostname", d.hostname),
        fileDevice(d.deviceUuid, "type", d.type),
        fileDevice(d.deviceUuid, "vendor", d.vendor),
        fileDevice(d.deviceUuid, "status", d.status),
      ];
    }
    case "DeviceChanged": {
      const { deviceUuid, changes, at } = e.data;
      const writes: Write[] = [{ op: "put", key: k("device", deviceUuid), fields: { ...changes, updatedAt: at } }];
      if (changes.type !== undefined) writes.push(fileDevice(deviceUuid, "type", changes.type));
      if (changes.vendor !== undefined) writes.push(fileDevice(deviceUuid, "vendor", changes.vendor));
      return writes;
    }
    case "DeviceStatusChanged":
      return projectLegacyStatus(e.data);
    case "DeviceTainted": {
      const { deviceUuid, taint, status, at } = e.data;
      const fields = { [taintField(taint.key, taint.effect)]: taint, status, updatedAt: at };
      return [{ op: "put", key: k("device", deviceUuid), fields }, fileDevice(deviceUuid, "status", status)];
    }
    case "DeviceUntainted": {
      const { deviceUuid, key, effect, status, at } = e.data;
      return [
        { op: "unset", key: k("device", deviceUuid), fields: [taintField(key, effect)] },
        { op: "put", key: k("device", deviceUuid), fields: { status, updatedAt: at } },
        fileDevice(deviceUuid, "status", status),
      ];
    }
    case "DeviceHealthChanged":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { health: e.data.health, updatedAt: e.data.at } }];
    case "DeviceTopologyChanged":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { topology: e.data.topology, updatedAt: e.data.at } }];
    case "DeviceLost":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { lost: true, updatedAt: e.data.at } }];
    case "DeviceRemoved": {
      const u = e.data.deviceUuid;
      return [
        { op: "del", key: k("device", u) },
        { op: "zrem", key: ORDER_KEY, member: u },
        fileDevice(u, "hostname", null),
        fileDevice(u, "type", null),
        fileDevice(u, "vendor", null),
        fileDevice(u, "status", null),
        { op: "del", key: k("deployables-of", u) },
      ];
    }
  }
}

/** The device doc's cleaning fields an event changes (the event alone tells them). */
function cleaningFields(e: CleaningEvent): Record<string, unknown> {
  switch (e.type) {
    case "DeviceCleaningRequirementSet":
      return { cleaningRequired: e.data.required };
    case "DeviceCleaningRequested":
      return { cleaningInFlight: { requestId: e.data.requestId, reason: e.data.reason, requestedAt: e.data.at }, qualifyingSince: null };
    case "DeviceCleaned": {
      const { requestId, digest, command, durationMs, at } = e.data;
      return { cleaningInFlight: null, qualifyingSince: at, failure: null, lastCleaning: { requestId, outcome: "cleaned", digest, command, durationMs, reason: null, at } };
    }
    case "DeviceCleaningFailed": {
      const { requestId, reason, at } = e.data;
      return { cleaningInFlight: null, lastCleaning: { requestId, outcome: "failed", digest: null, command: e.data.command ?? null, durationMs: e.data.durationMs ?? null, reason, at } };
    }
    case "DeviceQualified":
      return { qualifyingSince: null, failure: null };
    case "DeviceFailed":
      return { qualifyingSince: null, failure: { reason: e.data.reason, at: e.data.at } };
  }
}

/** A status change written before taints: the maintenance taint set or removed (as the host's evolve reads it). */
function projectLegacyStatus(d: Extract<InventoryEvent, { type: "DeviceStatusChanged" }>["data"]): Write[] {
  const { deviceUuid, status, at } = d;
  const field = taintField(MAINTENANCE_TAINT_KEY, "NoSchedule");
  const taint = status === "MAINTAINING" ? { key: MAINTENANCE_TAINT_KEY, value: "", effect: "NoSchedule", by: "", reason: "set to MAINTAINING", at } : null;
  return [
    taint ? { op: "put", key: k("device", deviceUuid), fields: { [field]: taint } } : { op: "unset", key: k("device", deviceUuid), fields: [field] },
    { op: "put", key: k("device", deviceUuid), fields: { status, updatedAt: at } },
    fileDevice(deviceUuid, "status", status),
  ];
}

/** The deployable doc and attributes, the deployable orders and the parent family. */
function projectDeployable(e: Recorded<DeployableEvent>): Write[] {
  switch (e.type) {
    case "DeployableAdded": {
      const d = e.data;
      const at = score(e.position);
      return [
        ...deployableWrites(k, e),
        { op: "zadd", key: DEPLOYABLES_KEY, member: d.deployableUuid, score: at, nx: true },
        { op: "zadd", key: k("deployables-of", d.deviceUuid), member: d.deployableUuid, score: at, nx: true },
        fileChild(d.deployableUuid, d.parentUuid),
      ];
    }
    case "DeployableChanged": {
      const { deployableUuid, changes } = e.data;
      const writes = deployableWrites(k, e);
      if (changes.parentUuid !== undefined) writes.push(fileChild(deployableUuid, changes.parentUuid));
      return writes;
    }
    case "DeployableRemoved": {
      const d = e.data;
      return [
        ...deployableWrites(k, e),
        fileChild(d.deployableUuid, null),
        { op: "zrem", key: DEPLOYABLES_KEY, member: d.deployableUuid },
        { op: "zrem", key: k("deployables-of", d.deviceUuid), member: d.deployableUuid },
        { op: "del", key: k("handles-of", d.deployableUuid) },
      ];
    }
    case "AttributeSet":
    case "AttributeRemoved":
      return deployableWrites(k, e);
  }
}

/** The handle doc and its place in its deployable's handle order; [] for other events. */
function projectHandle(e: Recorded<InventoryEvent>): Write[] {
  switch (e.type) {
    case "AttachHandleAdded": {
      const d = e.data;
      const handle = { uuid: d.handleUuid, type: d.handleType, info: d.info, lost: false, allocatedTo: null };
      return [
        { op: "put", key: k("handle", d.handleUuid), fields: handleView(d, handle) },
        { op: "zadd", key: k("handles-of", d.deployableUuid), member: d.handleUuid, score: score(e.position), nx: true },
      ];
    }
    case "AttachHandleChanged":
      return [{ op: "put", key: k("handle", e.data.handleUuid), fields: { type: e.data.handleType } }];
    case "AttachHandleLost":
      return [{ op: "put", key: k("handle", e.data.handleUuid), fields: { lost: true } }];
    case "AttachHandleRemoved":
      return [
        { op: "del", key: k("handle", e.data.handleUuid) },
        { op: "zrem", key: k("handles-of", e.data.deployableUuid), member: e.data.handleUuid },
      ];
    case "AttachHandleAllocated":
      return [{ op: "put", key: k("handle", e.data.handleUuid), fields: { inUse: true, arqUuid: e.data.arqUuid, heldSince: e.data.at } }];
    case "AttachHandleReleased":
      return [{ op: "put", key: k("handle", e.data.handleUuid), fields: { inUse: false, arqUuid: null, heldSince: null } }];
    default:
      return [];
  }
}

export const projection: Projection = { name, eventTypes, project };

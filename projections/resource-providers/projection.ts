/**
 * resource-providers: the accelerator resource providers as Placement would see them
 * (cyborg-reference 5.4): one child RP per deployable under the host's compute-node RP.
 *
 * Keys (all under the hash tag `{resource-providers}`):
 *   :rp:<deployable>         hash  uuid (the deployable's rpUuid) name parentProviderName (the host)
 *                                  deployableUuid deviceUuid total (numAccelerators), and on a
 *                                  partitioned device's profile, available (PartitionInventoryChanged)
 *   :attrs:<deployable>, :attr-order:<deployable>   see shared/deployables.ts (rc and traits)
 *   :in-use:<deployable>     zset  allocated attach handles (used = its size)
 *   :handles:<deployable>    zset  its attach handles; :lost:<deployable> those that left the report
 *                                  while allocated (reserved = total once every handle left)
 *   :draws:<deployable>      hash  arq uuid -> the JSON of the amounts it draws with its handle there
 *                                  (AttachHandleAllocated.draws; src/domain/inventory/capacity-record.ts)
 *   :device:<uuid>           hash  status, lost, cleaning, qualifying, failed, capacities (the JSON of
 *                                  the reported capacities), and taint:<key> <effect>
 *                                  -> effect, one field per taint (its lifecycle state: queries.ts; reserved = total while the
 *                                  device is not offered: MAINTAINING, that is tainted, cleaning, qualifying
 *                                  or failed; or left the report while allocated: src/domain/inventory/resource-providers.ts)
 *   :all                     zset  deployable uuids by the position that added them
 *   :by-host:<hostname>      zset  the same, per host
 *   :changed-hosts           zset  hostnames by the position of the last event on their stream (shared/changed-hosts.ts)
 */
import type { InventoryEvent } from "../../src/domain/events.js";
import { PROVIDER_EVENT_TYPES } from "../../src/domain/inventory/resource-providers.js";
import type { RecordedEvent, Recorded } from "../../src/infra/eventstore/port.js";
import type { Write } from "../../src/infra/readstore/port.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import { markingHost } from "../shared/changed-hosts.js";
import { attributeWrites } from "../shared/deployables.js";
import { taintField } from "../shared/device-views.js";
import { keys, score } from "../shared/keys.js";

export const name = "resource-providers";
export const k = keys(name);

/** What changes a provider (the domain's list, as the Placement sync follows it) and what changes its usage. */
export const eventTypes = [...PROVIDER_EVENT_TYPES, "AttachHandleAdded", "AttachHandleAllocated", "AttachHandleReleased"] as const;

export function project(event: RecordedEvent): Write[] {
  return markingHost(k, event, projectInventory(event));
}

function projectInventory(event: RecordedEvent): Write[] {
  const e = event as Recorded<InventoryEvent>;
  switch (e.type) {
    case "DeviceDiscovered":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { status: e.data.status, lost: false } }];
    case "DeviceStatusChanged":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { status: e.data.status } }];
    case "DeviceTainted": {
      const { deviceUuid, taint, status } = e.data;
      return [{ op: "put", key: k("device", deviceUuid), fields: { status, [taintField(taint.key, taint.effect)]: taint.effect } }];
    }
    case "DeviceUntainted": {
      const { deviceUuid, key, effect, status } = e.data;
      return [
        { op: "put", key: k("device", deviceUuid), fields: { status } },
        { op: "unset", key: k("device", deviceUuid), fields: [taintField(key, effect)] },
      ];
    }
    case "DeviceLost":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { lost: true } }];
    case "DeviceRemoved":
      return [{ op: "del", key: k("device", e.data.deviceUuid) }];
    case "DeviceCapacitiesChanged":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { capacities: JSON.stringify(e.data.capacities) } }];
    // The cleaning loop, as src/domain/inventory/cleaning.ts folds it (the decider fails only the request in flight).
    case "DeviceCleaningRequested":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { cleaning: true, qualifying: false } }];
    case "DeviceCleaned":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { cleaning: false, qualifying: true, failed: false } }];
    case "DeviceCleaningFailed":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { cleaning: false } }];
    case "DeviceQualified":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { qualifying: false, failed: false } }];
    case "DeviceFailed":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { qualifying: false, failed: true } }];
    case "DeployableAdded": {
      const d = e.data;
      const at = score(e.position);
      return [
        {
          op: "put",
          key: k("rp", d.deployableUuid),
          fields: { uuid: d.rpUuid, name: d.name, parentProviderName: d.hostname, deployableUuid: d.deployableUuid, deviceUuid: d.deviceUuid, total: d.numAccelerators },
        },
        { op: "zadd", key: k("all"), member: d.deployableUuid, score: at, nx: true },
        { op: "zadd", key: k("by-host", d.hostname), member: d.deployableUuid, score: at, nx: true },
      ];
    }
    case "PartitionInventoryChanged":
      return e.data.available.map((a): Write => ({ op: "put", key: k("rp", a.deployableUuid), fields: { available: a.available } }));
    case "DeployableChanged": {
      const n = e.data.changes.numAccelerators;
      return n === undefined ? [] : [{ op: "put", key: k("rp", e.data.deployableUuid), fields: { total: n } }];
    }
    case "DeployableRemoved": {
      const u = e.data.deployableUuid;
      return [
        { op: "del", key: k("rp", u) },
        { op: "del", key: k("attrs", u) },
        { op: "del", key: k("attr-order", u) },
        { op: "del", key: k("in-use", u) },
        { op: "del", key: k("handles", u) },
        { op: "del", key: k("lost", u) },
        { op: "del", key: k("draws", u) },
        { op: "zrem", key: k("all"), member: u },
        { op: "zrem", key: k("by-host", e.data.hostname), member: u },
      ];
    }
    case "AttributeSet":
    case "AttributeRemoved":
      return attributeWrites(k, e);
    case "AttachHandleAdded":
      return [{ op: "zadd", key: k("handles", e.data.deployableUuid), member: e.data.handleUuid, score: score(e.position) }];
    case "AttachHandleLost":
      return [{ op: "zadd", key: k("lost", e.data.deployableUuid), member: e.data.handleUuid, score: score(e.position) }];
    case "AttachHandleAllocated": {
      const { deployableUuid, handleUuid, arqUuid, draws } = e.data;
      const inUse: Write = { op: "zadd", key: k("in-use", deployableUuid), member: handleUuid, score: score(e.position) };
      return draws && draws.length > 0 ? [inUse, { op: "put", key: k("draws", deployableUuid), fields: { [arqUuid]: JSON.stringify(draws) } }] : [inUse];
    }
    case "AttachHandleReleased":
      return [
        { op: "zrem", key: k("in-use", e.data.deployableUuid), member: e.data.handleUuid },
        { op: "unset", key: k("draws", e.data.deployableUuid), fields: [e.data.arqUuid] },
      ];
    case "AttachHandleRemoved": {
      const { deployableUuid: d, handleUuid: h } = e.data;
      return ["in-use", "handles", "lost"].map((family): Write => ({ op: "zrem", key: k(family, d), member: h }));
    }
    default:
      return [];
  }
}

export const projection: Projection = { name, eventTypes, project };

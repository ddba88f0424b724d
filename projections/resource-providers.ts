/**
 * resource-providers: the accelerator resource providers as Placement would see them
 * (cyborg-reference 5.4): one child RP per deployable under the host's compute-node RP.
 *
 * Keys (all under the hash tag `{resource-providers}`):
 *   :rp:<deployable>         hash  uuid (the deployable's rpUuid) name parentProviderName (the host)
 *                                  deployableUuid deviceUuid total (numAccelerators)
 *   :attrs:<deployable>, :attr-order:<deployable>   see shared/deployables.ts (rc and traits)
 *   :in-use:<deployable>     zset  allocated attach handles (used = its size)
 *   :device:<uuid>           hash  status (reserved = total while the device is MAINTAINING)
 *   :all                     zset  deployable uuids by the position that added them
 *   :by-host:<hostname>      zset  the same, per host
 */
import type { InventoryEvent } from "../src/domain/events.js";
import type { RecordedEvent } from "../src/eventstore/port.js";
import type { ReadStore, Write } from "../src/readstore/port.js";
import { keys, score, type Projection, type Recorded } from "../src/readstore/projection.js";
import { attributesView } from "./shared/deployables.js";

export const name = "resource-providers";
const k = keys(name);

export type ResourceProviderView = {
  uuid: string;
  name: string;
  parentProviderName: string;
  resourceClass: string;
  total: number;
  reserved: number;
  used: number;
  traits: string[];
  deployableUuid: string;
  deviceUuid: string;
};

export const eventTypes = [
  "DeviceDiscovered",
  "DeviceStatusChanged",
  "DeviceRemoved",
  "DeployableAdded",
  "DeployableChanged",
  "DeployableRemoved",
  "AttributeSet",
  "AttributeRemoved",
  "AttachHandleAllocated",
  "AttachHandleReleased",
  "AttachHandleRemoved",
] as const;

export function project(event: RecordedEvent): Write[] {
  const e = event as Recorded<InventoryEvent>;
  switch (e.type) {
    case "DeviceDiscovered":
    case "DeviceStatusChanged":
      return [{ op: "put", key: k("device", e.data.deviceUuid), fields: { status: e.data.status } }];
    case "DeviceRemoved":
      return [{ op: "del", key: k("device", e.data.deviceUuid) }];
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
        { op: "zrem", key: k("all"), member: u },
        { op: "zrem", key: k("by-host", e.data.hostname), member: u },
      ];
    }
    case "AttributeSet": {
      const d = e.data;
      return [
        { op: "put", key: k("attrs", d.deployableUuid), fields: { [d.attributeUuid]: { key: d.key, value: d.value } } },
        { op: "zadd", key: k("attr-order", d.deployableUuid), member: d.attributeUuid, score: score(e.position), nx: true },
      ];
    }
    case "AttributeRemoved":
      return [
        { op: "unset", key: k("attrs", e.data.deployableUuid), fields: [e.data.attributeUuid] },
        { op: "zrem", key: k("attr-order", e.data.deployableUuid), member: e.data.attributeUuid },
      ];
    case "AttachHandleAllocated":
      return [{ op: "zadd", key: k("in-use", e.data.deployableUuid), member: e.data.handleUuid, score: score(e.position) }];
    case "AttachHandleReleased":
    case "AttachHandleRemoved":
      return [{ op: "zrem", key: k("in-use", e.data.deployableUuid), member: e.data.handleUuid }];
    default:
      return [];
  }
}

export const projection: Projection = { name, eventTypes, project };

// ---- queries -------------------------------------------------------------------------------

/**
 * Every accelerator RP (of one host), in the order the deployables were added. A deployable
 * without an `rc` attribute (e.g. an FPGA region above its functions) has no inventory in
 * Placement, so it is no RP. Three round trips.
 */
export async function listResourceProviders(store: ReadStore, hostname?: string | null): Promise<ResourceProviderView[]> {
  const [members] = await store.getMembers([hostname ? k("by-host", hostname) : k("all")]);
  const deps = members!;
  const [rps, attrs, orders, used] = await Promise.all([
    store.getDocs(deps.map((u) => k("rp", u))),
    store.getDocs(deps.map((u) => k("attrs", u))),
    store.getMembers(deps.map((u) => k("attr-order", u))),
    store.count(deps.map((u) => k("in-use", u))),
  ]);
  const deviceUuids = [...new Set(rps.flatMap((rp) => (rp ? [rp.deviceUuid as string] : [])))];
  const devices = await store.getDocs(deviceUuids.map((u) => k("device", u)));
  const maintaining = new Set(deviceUuids.filter((_, i) => devices[i]?.status === "MAINTAINING"));
  const out: ResourceProviderView[] = [];
  rps.forEach((rp, i) => {
    if (!rp) return;
    const { resourceClass, traits } = attributesView(attrs[i]!, orders[i]!);
    if (resourceClass === null) return;
    const total = rp.total as number;
    out.push({
      uuid: rp.uuid as string,
      name: rp.name as string,
      parentProviderName: rp.parentProviderName as string,
      resourceClass,
      total,
      reserved: maintaining.has(rp.deviceUuid as string) ? total : 0,
      used: used[i]!,
      traits,
      deployableUuid: rp.deployableUuid as string,
      deviceUuid: rp.deviceUuid as string,
    });
  });
  return out;
}

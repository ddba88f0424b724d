/**
 * deployables: every deployable, findable by host, resource provider, device and name (the
 * `deployables(filter)` query and Placement-style lookups by RP uuid). It keeps its own copy of
 * the deployable docs, so it can be rebuilt without device-tree.
 *
 * Keys (all under the hash tag `{deployables}`):
 *   :deployable:<uuid>, :attrs:<uuid>, :attr-order:<uuid>   see shared/deployables.ts
 *   :all                         zset  deployable uuids by the position that added them
 *   :by-host|by-rp|by-device|by-name          family (hash uuid -> value) and
 *   :by-<f>:<value>              zset  the deployables with that value, in the order added
 */
import type { InventoryEvent } from "../../src/domain/events.js";
import type { RecordedEvent, Recorded } from "../../src/eventstore/port.js";
import type { Write } from "../../src/readstore/port.js";
import type { Projection } from "../../src/projector/projection.js";
import { DEPLOYABLE_EVENTS, deployableWrites } from "../shared/deployables.js";
import { indexFamilies, keys, score } from "../shared/keys.js";

export const name = "deployables";
export const k = keys(name);

export const FAMILIES = { hostname: "by-host", rpUuid: "by-rp", deviceUuid: "by-device", name: "by-name" } as const;
const { orderKey: ORDER_KEY, file } = indexFamilies(k, FAMILIES, "all");

export const eventTypes = DEPLOYABLE_EVENTS;

export function project(event: RecordedEvent): Write[] {
  const e = event as Recorded<InventoryEvent>;
  const writes = deployableWrites(k, e);
  if (e.type === "DeployableAdded") {
    const d = e.data;
    writes.push(
      { op: "zadd", key: ORDER_KEY, member: d.deployableUuid, score: score(e.position), nx: true },
      file(d.deployableUuid, "hostname", d.hostname),
      file(d.deployableUuid, "rpUuid", d.rpUuid),
      file(d.deployableUuid, "deviceUuid", d.deviceUuid),
      file(d.deployableUuid, "name", d.name),
    );
  } else if (e.type === "DeployableRemoved") {
    const u = e.data.deployableUuid;
    writes.push(file(u, "hostname", null), file(u, "rpUuid", null), file(u, "deviceUuid", null), file(u, "name", null), {
      op: "zrem",
      key: ORDER_KEY,
      member: u,
    });
  }
  return writes;
}

export const projection: Projection = { name, eventTypes, project };

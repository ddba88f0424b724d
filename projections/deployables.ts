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
import type { InventoryEvent } from "../src/domain/events.js";
import type { RecordedEvent } from "../src/eventstore/port.js";
import type { ReadStore, Write } from "../src/readstore/port.js";
import { indexFamilies, keys, score, type Projection, type Recorded } from "../src/readstore/projection.js";
import { DEPLOYABLE_EVENTS, deployableWrites, readDeployables, type DeployableView } from "./shared/deployables.js";
import { pageOf, type Page } from "./shared/page.js";

export const name = "deployables";
const k = keys(name);

export interface DeployableFilter {
  hostname?: string | null;
  rpUuid?: string | null;
  deviceUuid?: string | null;
  name?: string | null;
}

const FAMILIES = { hostname: "by-host", rpUuid: "by-rp", deviceUuid: "by-device", name: "by-name" } as const;
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

// ---- queries -------------------------------------------------------------------------------

export function getDeployables(store: ReadStore, uuids: readonly string[]): Promise<Array<DeployableView | null>> {
  return readDeployables(store, k, uuids);
}

export async function listDeployables(store: ReadStore, filter: DeployableFilter, first: number, after?: string): Promise<Page<DeployableView>> {
  const index: string[] = [];
  for (const field of ["rpUuid", "name", "deviceUuid", "hostname"] as const) {
    const v = filter[field];
    if (v !== undefined && v !== null) index.push(k(`${FAMILIES[field]}:${v}`));
  }
  return pageOf(store, index.length ? index : [k("all")], first, after, (u) => getDeployables(store, u));
}

/** Deployables of resource providers, in the order of `rpUuids` (normally one each). */
export async function deployablesByRp(store: ReadStore, rpUuids: readonly string[]): Promise<DeployableView[][]> {
  const members = await store.getMembers(rpUuids.map((u) => k(`${FAMILIES.rpUuid}:${u}`)));
  const loaded = await getDeployables(store, members.flat());
  let i = 0;
  return members.map((list) => list.flatMap(() => (loaded[i++] ? [loaded[i - 1]!] : [])));
}

/** Deployables of hosts, in the order they were added. */
export async function deployablesByHost(store: ReadStore, hostnames: readonly string[]): Promise<DeployableView[][]> {
  const members = await store.getMembers(hostnames.map((h) => k(`${FAMILIES.hostname}:${h}`)));
  const loaded = await getDeployables(store, members.flat());
  let i = 0;
  return members.map((list) => list.flatMap(() => (loaded[i++] ? [loaded[i - 1]!] : [])));
}

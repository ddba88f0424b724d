/** The deployables read model's queries: by uuid, filtered lists, and by resource provider or host. */
import type { ReadStore } from "../../src/readstore/port.js";
import { readDeployables, type DeployableView } from "../shared/deployables.js";
import { filterIndexes, pageOf, type Page } from "../shared/page.js";
import { FAMILIES, k } from "./projection.js";

export interface DeployableFilter {
  hostname?: string | null;
  rpUuid?: string | null;
  deviceUuid?: string | null;
  name?: string | null;
}

export function getDeployables(store: ReadStore, uuids: readonly string[]): Promise<Array<DeployableView | null>> {
  return readDeployables(store, k, uuids);
}

export async function listDeployables(store: ReadStore, filter: DeployableFilter, first: number, after?: string): Promise<Page<DeployableView>> {
  const index = filterIndexes(k, FAMILIES, filter, ["rpUuid", "name", "deviceUuid", "hostname"], "all");
  return pageOf(store, index, first, after, (u) => getDeployables(store, u));
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

/**
 * Every read the REST API makes, in one place: the read models' own queries
 * (projections/<model>/queries.ts) over the read store the composition root hands the API.
 * Cyborg's lists have no pagination, so lists here page through to the end.
 */
import type { ArqView } from "../../domain/arqs/view.js";
import type { DeviceProfileView } from "../../domain/device-profiles/view.js";
import type { ReadStore } from "../../infra/readstore/port.js";
import { getArqs, listArqs, type ArqFilter } from "../../../projections/arqs/queries.js";
import { getDeployables, lastProgrammingOf, listDeployables, type DeployableFilter, type LastProgrammingView } from "../../../projections/deployables/queries.js";
import { getProfileByName, getProfileByUuid, listProfiles } from "../../../projections/device-profiles/queries.js";
import { getDevices, listDevices, type DeployableView, type DeviceFilter, type DeviceView } from "../../../projections/device-tree/queries.js";
import type { Page } from "../../../projections/shared/page.js";
import type { DeviceLoopReads } from "../device-loop.js";
import { Loaders } from "../loaders.js";

export type { ArqView, DeployableView, DeviceProfileView, DeviceView };

const PAGE = 1000;

export class RestReads {
  constructor(private readonly store: ReadStore) {}

  async arq(uuid: string): Promise<ArqView | null> {
    return (await getArqs(this.store, [uuid]))[0] ?? null;
  }

  /** Every ARQ the filter matches, in creation order. */
  arqs(filter: ArqFilter): Promise<ArqView[]> {
    return all((first, after) => listArqs(this.store, filter, first, after));
  }

  profiles(names?: readonly string[]): Promise<DeviceProfileView[]> {
    return listProfiles(this.store, names);
  }

  profileByUuid(uuid: string): Promise<DeviceProfileView | null> {
    return getProfileByUuid(this.store, uuid);
  }

  profileByName(name: string): Promise<DeviceProfileView | null> {
    return getProfileByName(this.store, name);
  }

  async device(uuid: string): Promise<DeviceView | null> {
    return (await getDevices(this.store, [uuid]))[0] ?? null;
  }

  devices(filter: DeviceFilter, limit?: number): Promise<DeviceView[]> {
    return all((first, after) => listDevices(this.store, filter, first, after), limit);
  }

  /** Batched reads of devices' handles and holders, for one request (GraphQL's DataLoaders). */
  deviceLoop(): DeviceLoopReads {
    return new Loaders(this.store);
  }

  async deployable(uuid: string): Promise<DeployableView | null> {
    return (await getDeployables(this.store, [uuid]))[0] ?? null;
  }

  async lastProgramming(deployableUuid: string): Promise<LastProgrammingView | null> {
    return (await lastProgrammingOf(this.store, [deployableUuid]))[0] ?? null;
  }

  deployables(filter: DeployableFilter, limit?: number): Promise<DeployableView[]> {
    return all((first, after) => listDeployables(this.store, filter, first, after), limit);
  }
}

/** Pages through a list until its end (or `limit` items). */
async function all<T>(page: (first: number, after?: string) => Promise<Page<T>>, limit = Infinity): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (;;) {
    const p = await page(Math.min(PAGE, limit - out.length), after);
    out.push(...p.items);
    if (!p.hasNextPage || p.items.length === 0 || out.length >= limit) return out;
    after = p.cursors.at(-1);
  }
}

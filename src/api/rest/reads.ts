/**
 * Every read the REST API makes, in one place: today through the GraphQL layer's ReadSide (what
 * the composition root hands the API), typed with the projections' views. When each read model's
 * queries move next to it, this is the one module to repoint.
 */
import type { ReadSide } from "../graphql/read-side.js";
import type { ArqFilter, ArqView, DeployableFilter, DeployableView, DeviceFilter, DeviceProfileView, DeviceView, Page } from "../../readstore/queries.js";

export type { ArqView, DeployableView, DeviceProfileView, DeviceView };

const PAGE = 1000;

export class RestReads {
  constructor(private readonly read: ReadSide) {}

  async arq(uuid: string): Promise<ArqView | null> {
    return ((await this.read.getArqs([uuid]))[0] ?? null) as ArqView | null;
  }

  /** Every ARQ the filter matches, in creation order (Cyborg's lists have no pagination). */
  arqs(filter: ArqFilter): Promise<ArqView[]> {
    return all((first, after) => this.read.listArqs(definedOnly(filter), first, after) as Promise<Page<ArqView>>);
  }

  profiles(names?: readonly string[]): Promise<DeviceProfileView[]> {
    return this.read.listProfiles(names) as Promise<DeviceProfileView[]>;
  }

  profileByUuid(uuid: string): Promise<DeviceProfileView | null> {
    return this.read.getProfileByUuid(uuid) as Promise<DeviceProfileView | null>;
  }

  profileByName(name: string): Promise<DeviceProfileView | null> {
    return this.read.getProfileByName(name) as Promise<DeviceProfileView | null>;
  }

  async device(uuid: string): Promise<DeviceView | null> {
    return ((await this.read.getDevices([uuid]))[0] ?? null) as DeviceView | null;
  }

  devices(filter: DeviceFilter, limit?: number): Promise<DeviceView[]> {
    return all((first, after) => this.read.listDevices(definedOnly(filter), first, after) as Promise<Page<DeviceView>>, limit);
  }

  async deployable(uuid: string): Promise<DeployableView | null> {
    return ((await this.read.getDeployables([uuid]))[0] ?? null) as DeployableView | null;
  }

  deployables(filter: DeployableFilter, limit?: number): Promise<DeployableView[]> {
    return all((first, after) => this.read.listDeployables(definedOnly(filter), first, after) as Promise<Page<DeployableView>>, limit);
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

/** The ReadSide's filters take absent fields as "any"; a null would be a value to match. */
function definedOnly<F extends object>(filter: F): { [K in keyof F]: Exclude<F[K], null> } {
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined && v !== null)) as never;
}

/**
 * The placement engine's candidates, kept across decisions by this API process (the domain's
 * KeptCandidates): read whole once, then, before each use, only the hosts the inventory models
 * marked as changed at or after the position they were last read at
 * (projections/shared/changed-hosts.ts) are read again and put into the index, or removed from it.
 *
 * A host's candidates come from two models (resource-providers, device-tree) with their own
 * checkpoints; the index counts as read up to the lower of the two, so a change one model showed
 * before the other is read again once both show it. A model rebuilt from another log (its
 * checkpoint behind what was read) is read whole again.
 */
import { getDevices, hostsChangedSince as devicesChangedSince } from "../../projections/device-tree/queries.js";
import { name as deviceTree } from "../../projections/device-tree/projection.js";
import { name as resourceProviders } from "../../projections/resource-providers/projection.js";
import { hostsChangedSince as providersChangedSince, listResourceProviders } from "../../projections/resource-providers/queries.js";
import type { DeviceTopology } from "../domain/inventory/topology-report.js";
import { KeptCandidates, type CandidateHost, type CandidateIndex } from "../domain/scheduling/index.js";
import type { ReadStore } from "../infra/readstore/port.js";

const MODELS = [resourceProviders, deviceTree];

export class CandidatesFeed {
  private kept = new KeptCandidates();
  /** The position the index was read up to: null before the first read, undefined while the models had none. */
  private readUpTo: bigint | undefined | null = null;
  private tail: Promise<void> = Promise.resolve();
  /** A read not yet started, which callers arriving now join. */
  private next: Promise<void> | null = null;

  constructor(private readonly store: ReadStore) {}

  /** The candidates as the read models show them now (hosts' agents' liveness is the caller's: PlacementLimits.stale). */
  async current(): Promise<CandidateIndex> {
    let read = this.next;
    if (read === null) {
      const started: Promise<void> = this.tail.then(() => {
        if (this.next === started) this.next = null;
        return this.refresh();
      });
      read = this.next = started;
      this.tail = started.catch(() => undefined);
    }
    await read;
    return this.kept;
  }

  private async refresh(): Promise<void> {
    const checkpoints = await this.store.getCheckpoints(MODELS);
    const upTo = checkpoints.some((c) => c === undefined) ? undefined : checkpoints.reduce((a, b) => (a! < b! ? a : b));
    const behind = this.readUpTo !== null && this.readUpTo !== undefined && (upTo === undefined || upTo < this.readUpTo);
    if (this.readUpTo === null || behind) {
      this.kept = new KeptCandidates(await readHosts(this.store, null));
    } else {
      const since = this.readUpTo;
      const changed = [...new Set((await Promise.all([providersChangedSince(this.store, since), devicesChangedSince(this.store, since)])).flat())];
      if (changed.length > 0) {
        const hosts = new Map((await readHosts(this.store, changed)).map((h) => [h.hostname, h]));
        for (const name of changed) {
          const host = hosts.get(name);
          if (host) this.kept.put(host);
          else this.kept.remove(name);
        }
      }
    }
    this.readUpTo = upTo;
  }
}

/** The hosts' candidates as the read models show them (every host's when `hostnames` is null); a host without providers is left out. */
export async function readHosts(store: ReadStore, hostnames: readonly string[] | null): Promise<CandidateHost[]> {
  const rps = hostnames ? (await Promise.all(hostnames.map((h) => listResourceProviders(store, h)))).flat() : await listResourceProviders(store);
  const deviceUuids = [...new Set(rps.map((rp) => rp.deviceUuid))];
  const devices = new Map((await getDevices(store, deviceUuids)).flatMap((d) => (d ? [[d.uuid, d] as const] : [])));
  const byHost = new Map<string, CandidateHost>();
  for (const rp of rps) {
    const d = devices.get(rp.deviceUuid);
    const lifecycle = !d || d.lost ? "LOST" : d.failure ? "FAILED" : d.cleaningInFlight ? "CLEANING" : d.qualifyingSince ? "QUALIFYING" : "AVAILABLE";
    // A tainted device's capacity is reserved in Placement; here the taint rule (and the group's tolerations) decides.
    const taintDecides = d !== undefined && d.taints.length > 0 && lifecycle === "AVAILABLE";
    const reserved = taintDecides ? 0 : rp.reserved;
    let host = byHost.get(rp.parentProviderName);
    if (!host) byHost.set(rp.parentProviderName, (host = { hostname: rp.parentProviderName, stale: false, providers: [] }));
    (host.providers as CandidateHost["providers"][number][]).push({
      rpUuid: rp.uuid,
      deviceUuid: rp.deviceUuid,
      resourceClass: rp.resourceClass,
      traits: new Set(rp.traits),
      free: Math.max(0, rp.total - reserved - rp.used),
      taints: d?.taints ?? [],
      lifecycle,
      topology: (d as { topology?: DeviceTopology | null } | undefined)?.topology ?? null,
      ...(rp.capacities.length > 0 ? { capacityFree: new Map(rp.capacities.map((c) => [c.resourceClass, Math.max(0, c.total - (taintDecides ? 0 : c.reserved) - c.used)])) } : {}),
    });
  }
  return [...byHost.values()];
}

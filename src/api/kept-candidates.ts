/**
 * The placement engine's candidates, kept across decisions by this API process (the domain's
 * KeptCandidates): a host-feed (projections/shared/host-feed.ts) over the two models a host's
 * candidates come from, resource-providers and device-tree.
 */
import { getDevices, hostsChangedSince as devicesChangedSince } from "../../projections/device-tree/queries.js";
import { name as deviceTree } from "../../projections/device-tree/projection.js";
import { name as resourceProviders } from "../../projections/resource-providers/projection.js";
import { hostsChangedSince as providersChangedSince, listResourceProviders } from "../../projections/resource-providers/queries.js";
import { HostFeed } from "../../projections/shared/host-feed.js";
import type { DeviceTopology } from "../domain/inventory/topology-report.js";
import { KeptCandidates, type CandidateHost } from "../domain/scheduling/index.js";
import type { ReadStore } from "../infra/readstore/port.js";

export class CandidatesFeed extends HostFeed<CandidateHost, KeptCandidates> {
  constructor(store: ReadStore) {
    super(store, { models: [resourceProviders, deviceTree], changedSince: [providersChangedSince, devicesChangedSince], read: readHosts, empty: () => new KeptCandidates() });
  }
}

/** The named hosts' candidates as the read models show them; a host without providers is left out. */
export async function readHosts(store: ReadStore, hostnames: readonly string[]): Promise<CandidateHost[]> {
  const rps = (await Promise.all(hostnames.map((h) => listResourceProviders(store, h)))).flat();
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

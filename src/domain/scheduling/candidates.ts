/**
 * The candidates, indexed once by the read side: hosts by name and by the resource classes their
 * providers offer, so a decision looks only at hosts that offer what every group needs.
 */
import type { CandidateHost, PlacementLimits, PlacementRequest } from "./types.js";

export interface CandidateIndex {
  hosts: readonly CandidateHost[];
  byName: ReadonlyMap<string, CandidateHost>;
  byClass: ReadonlyMap<string, readonly CandidateHost[]>;
}

/** Hosts by name and providers by uuid, so answers never depend on the order the read side gave them in. */
export function indexCandidates(hosts: readonly CandidateHost[]): CandidateIndex {
  const byUuid = (a: { rpUuid: string }, b: { rpUuid: string }) => (a.rpUuid < b.rpUuid ? -1 : a.rpUuid > b.rpUuid ? 1 : 0);
  const sorted = [...hosts]
    .sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0))
    .map((h) => ({ ...h, providers: [...h.providers].sort(byUuid) }));
  const byName = new Map(sorted.map((h) => [h.hostname, h]));
  const byClass = new Map<string, CandidateHost[]>();
  for (const h of sorted) {
    for (const rc of new Set(h.providers.map((p) => p.resourceClass))) {
      let list = byClass.get(rc);
      if (!list) byClass.set(rc, (list = []));
      list.push(h);
    }
  }
  return { hosts: sorted, byName, byClass };
}

/** The same index without some hosts and devices (what-if: "if we drain rack 12"). */
export function withoutCandidates(index: CandidateIndex, without: { hosts?: readonly string[]; devices?: readonly string[] }): CandidateIndex {
  const hosts = new Set(without.hosts ?? []);
  const devices = new Set(without.devices ?? []);
  const kept = index.hosts.filter((h) => !hosts.has(h.hostname));
  return indexCandidates(devices.size === 0 ? kept : kept.map((h) => ({ ...h, providers: h.providers.filter((p) => !devices.has(p.deviceUuid)) })));
}

/** Whether the limits let the request onto the host. */
export function allowedBy(limits: PlacementLimits, hostname: string): boolean {
  if (limits.instanceHost != null && limits.instanceHost !== hostname) return false;
  return limits.hosts == null || limits.hosts.includes(hostname);
}

/**
 * The hosts worth trying, in name order: those offering, for every group, the class of one of its
 * alternatives (the group with the fewest such hosts drives), within the limits.
 */
export function hostsToTry(index: CandidateIndex, request: PlacementRequest, limits: PlacementLimits): CandidateHost[] {
  const named = limits.instanceHost != null ? [limits.instanceHost] : limits.hosts ?? null;
  if (named !== null) {
    return [...new Set(named)].filter((h) => allowedBy(limits, h)).flatMap((h) => index.byName.get(h) ?? []).sort((a, b) => (a.hostname < b.hostname ? -1 : 1));
  }
  let best: CandidateHost[] | null = null;
  for (const g of request.groups) {
    const union = new Set<CandidateHost>();
    for (const need of g.alternatives) for (const h of index.byClass.get(need.resourceClass) ?? []) union.add(h);
    if (best === null || union.size < best.length) best = [...union];
  }
  return (best ?? []).sort((a, b) => (a.hostname < b.hostname ? -1 : 1));
}

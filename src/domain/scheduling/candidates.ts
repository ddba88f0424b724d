/**
 * The candidates as the read side hands them: hosts by name and by the resource classes their
 * providers offer (kept across decisions: kept-index.ts), so a decision looks only at hosts that
 * offer what every group needs.
 */
import { KeptCandidates } from "./kept-index.js";
import type { CandidateHost, CandidateIndex, PlacementLimits, PlacementRequest } from "./types.js";

export type { CandidateIndex };

/** Hosts by name and providers by uuid, so answers never depend on the order the read side gave them in. */
export function indexCandidates(hosts: readonly CandidateHost[]): CandidateIndex {
  return new KeptCandidates(hosts);
}

/**
 * The same index without some hosts and devices (what-if: "if we drain rack 12"). The hosts kept
 * whole are the index's own (what was computed of them is reused); a host losing devices is new.
 */
export function withoutCandidates(index: CandidateIndex, without: { hosts?: readonly string[]; devices?: readonly string[] }): CandidateIndex {
  const gone = new Set(without.hosts ?? []);
  const devices = new Set(without.devices ?? []);
  if (gone.size === 0 && devices.size === 0) return index;
  const replaced = new Map<CandidateHost, CandidateHost>();
  if (devices.size > 0) {
    for (const h of index.hosts) {
      if (!gone.has(h.hostname) && h.providers.some((p) => devices.has(p.deviceUuid))) replaced.set(h, { ...h, providers: h.providers.filter((p) => !devices.has(p.deviceUuid)) });
    }
  }
  const keep = (hosts: readonly CandidateHost[]) => hosts.flatMap((h) => (gone.has(h.hostname) ? [] : [replaced.get(h) ?? h]));
  const hosts = keep(index.hosts);
  const byClass = new Map<string, readonly CandidateHost[]>();
  for (const [rc, list] of index.byClass) {
    const kept = keep(list).filter((h) => !replaced.has(index.byName.get(h.hostname)!) || h.providers.some((p) => p.resourceClass === rc));
    if (kept.length > 0) byClass.set(rc, kept);
  }
  return { hosts, byName: new Map(hosts.map((h) => [h.hostname, h])), byClass };
}

/** Whether the host's agent has stopped reporting (as the read side saw it, or as the limits' `stale` says now). */
export function staleHost(limits: PlacementLimits, host: CandidateHost): boolean {
  return host.stale || (limits.stale?.(host.hostname) ?? false);
}

/** Whether the limits let the request onto the host. */
export function allowedBy(limits: PlacementLimits, hostname: string): boolean {
  if (limits.instanceHost != null && limits.instanceHost !== hostname) return false;
  return limits.hosts == null || limits.hosts.includes(hostname);
}

/**
 * The hosts worth trying: those offering, for every group, the class of one of its alternatives
 * (the group with the fewest such hosts drives), within the limits (those it answers are allowed
 * by them: `allowedBy` need not be asked again). In no particular order: every
 * answer built from them is ordered by a total order of its own.
 */
export function hostsToTry(index: CandidateIndex, request: PlacementRequest, limits: PlacementLimits): readonly CandidateHost[] {
  if (limits.instanceHost != null) {
    const host = allowedBy(limits, limits.instanceHost) ? index.byName.get(limits.instanceHost) : undefined;
    return host ? [host] : [];
  }
  // Every named host is allowed by the limits that name it: no host is looked for in the list again.
  if (limits.hosts != null) return [...new Set(limits.hosts)].flatMap((h) => index.byName.get(h) ?? []);
  let best: readonly CandidateHost[] | null = null;
  for (const g of request.groups) {
    const lists = g.alternatives.map((need) => index.byClass.get(need.resourceClass) ?? []);
    const hosts = lists.length === 1 ? lists[0]! : [...new Set(lists.flat())];
    if (best === null || hosts.length < best.length) best = hosts;
  }
  return best ?? [];
}

/**
 * How many more of a request fit now, per host and in total: the engine's choice made again and
 * again on each host, each time on what the earlier ones left. The same on an index without some
 * hosts or devices answers "what if".
 */
import { allowedBy, hostsToTry, staleHost } from "./candidates.js";
import { providerRoom } from "./fit.js";
import { chooseOnHost, MAX_STEPS, topologyValue } from "./host-choice.js";
import type { FreeLevels } from "./free-levels.js";
import type { CandidateHost, CandidateIndex, GroupRequest, PlacementLimits, PlacementRequest } from "./types.js";

/** Counting stops here on one host (a profile asking for nothing bounded). */
export const MAX_PER_HOST = 1024;

export interface Capacity {
  total: number;
  /** Hosts where at least one more fits, most first, then by name. */
  hosts: { hostname: string; count: number }[];
}

export function capacity(request: PlacementRequest, index: CandidateIndex, limits: PlacementLimits = {}): Capacity {
  if (!request.enabled) return { total: 0, hosts: [] };
  const hosts: Capacity["hosts"] = [];
  let total = 0;
  for (const host of hostsToCount(index, request, limits)) {
    if (staleHost(limits, host) || !allowedBy(limits, host.hostname)) continue;
    const count = countOnHost(host, request);
    if (count > 0) {
      hosts.push({ hostname: host.hostname, count });
      total += count;
    }
  }
  hosts.sort((a, b) => b.count - a.count || (a.hostname < b.hostname ? -1 : 1));
  return { total, hosts };
}

/**
 * The hosts worth counting: on an index that keeps free handles by level, only those with a free
 * handle of a class the driving group (the one with the fewest such hosts) could use; else those
 * offering the classes.
 */
function* hostsToCount(index: CandidateIndex, request: PlacementRequest, limits: PlacementLimits): Iterable<CandidateHost> {
  if (!index.freeOf || limits.hosts != null || limits.instanceHost != null) return yield* hostsToTry(index, request, limits);
  const levelsOf = (g: GroupRequest) => [...new Set(g.alternatives.map((n) => n.resourceClass))].flatMap((rc) => index.freeOf!(rc) ?? []);
  let driving: FreeLevels[] | null = null;
  let fewest = Infinity;
  for (const g of request.groups) {
    const levels = levelsOf(g);
    const hosts = levels.reduce((s, l) => s + l.size, 0);
    if (hosts < fewest) [driving, fewest] = [levels, hosts];
  }
  for (const [i, levels] of (driving ?? []).entries()) {
    for (const [hostname, free] of levels.byHost) {
      // A host with free handles of several of the group's classes is counted under the first.
      if (free === 0 || driving!.slice(0, i).some((l) => (l.byHost.get(hostname) ?? 0) > 0)) continue;
      yield index.byName.get(hostname)!;
    }
  }
}

/** How many more fit on the host: for one group, counted provider by provider; else the choice made again and again. */
export function countOnHost(host: CandidateHost, request: PlacementRequest): number {
  const only = request.groups.length === 1 ? request.groups[0]! : null;
  if (only !== null && only.alternatives.length * host.providers.length <= MAX_STEPS) return countOneGroup(host, only);
  return countByChoices(host, request);
}

/** The definition: the engine's choice on the host, again and again on what the earlier ones left. */
export function countByChoices(host: CandidateHost, request: PlacementRequest): number {
  const taken = new Map<string, number>();
  let count = 0;
  while (count < MAX_PER_HOST) {
    const choice = chooseOnHost(host, request, taken);
    if (choice === null) break;
    for (const a of choice.assignments) taken.set(a.rpUuid, (taken.get(a.rpUuid) ?? 0) + a.amount);
    count++;
  }
  return count;
}

/**
 * One group: each choice takes the earliest alternative some provider still has room for, and
 * taking from one provider leaves the others' room as it was, so the count is each alternative's
 * room, provider by provider, in order, on what the earlier alternatives left.
 */
function countOneGroup(host: CandidateHost, g: GroupRequest): number {
  const taken = new Map<string, number>();
  let count = 0;
  for (const need of g.alternatives) {
    for (const p of host.providers) {
      if (g.match.some((a) => topologyValue(p.topology, a) === null)) continue;
      const used = taken.get(p.rpUuid) ?? 0;
      const room = providerRoom(p, need, g.tolerations, used);
      if (typeof room !== "number") continue;
      const k = Math.min(room, MAX_PER_HOST - count);
      taken.set(p.rpUuid, used + k * need.amount);
      count += k;
      if (count >= MAX_PER_HOST) return count;
    }
  }
  return count;
}

/**
 * How many more of a request fit now, per host and in total: the engine's choice made again and
 * again on each host, each time on what the earlier ones left. The same on an index without some
 * hosts or devices answers "what if".
 */
import { allowedBy, hostsToTry, type CandidateIndex } from "./candidates.js";
import { chooseOnHost } from "./host-choice.js";
import type { PlacementLimits, PlacementRequest } from "./types.js";

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
  for (const host of hostsToTry(index, request, limits)) {
    if (host.stale || !allowedBy(limits, host.hostname)) continue;
    const taken = new Map<string, number>();
    let count = 0;
    while (count < MAX_PER_HOST) {
      const choice = chooseOnHost(host, request, taken);
      if (choice === null) break;
      for (const a of choice.assignments) taken.set(a.rpUuid, (taken.get(a.rpUuid) ?? 0) + a.amount);
      count++;
    }
    if (count > 0) {
      hosts.push({ hostname: host.hostname, count });
      total += count;
    }
  }
  hosts.sort((a, b) => b.count - a.count || (a.hostname < b.hostname ? -1 : 1));
  return { total, hosts };
}

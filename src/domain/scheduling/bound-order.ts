/**
 * The hosts a decision tries, in the order of the most their providers could give the request
 * (`bound`: per group, the free handles of the class of its best-provided alternative, summed),
 * largest first. place.ts stops once no later host can beat the choices it keeps.
 *
 * With a host limit, the named hosts' bounds are worked out and bucketed. Without one, an index
 * kept across decisions (kept-index.ts) keeps every host's bound for the request's shape by level,
 * so the hosts come in bound order at once and the search stops after the few with the most,
 * without reading the rest of the fleet.
 */
import { allowedBy, hostsToTry, staleHost } from "./candidates.js";
import type { FreeLevels } from "./free-levels.js";
import { freeOfClass } from "./host-choice.js";
import { boundOfShape, shapeOf, toleratesNothing } from "./request-shape.js";
import type { CandidateHost, CandidateIndex, PlacementLimits, PlacementRequest } from "./types.js";

export interface Bounded {
  host: CandidateHost;
  bound: number;
}

/** Called with each host in bound order, largest first; returns false to stop. */
export type BoundVisitor = (host: CandidateHost, bound: number) => boolean;

/** Visits the hosts in bound order without making an object per host (a decision on a fleet reads thousands). */
export function visitByBound(index: CandidateIndex, request: PlacementRequest, limits: PlacementLimits, visit: BoundVisitor): void {
  const unlimited = limits.hosts == null && limits.instanceHost == null;
  const levels = unlimited ? index.boundsOf?.(shapeOf(request), toleratesNothing(request)) : undefined;
  if (levels) fromBounds(index, levels, limits, visit);
  else bucketed(hostsToTry(index, request, limits), request, limits, freeOnHost(index, request), visit);
}

/** The same, as a list (tests, tools). */
export function hostsByBound(index: CandidateIndex, request: PlacementRequest, limits: PlacementLimits): Bounded[] {
  const out: Bounded[] = [];
  visitByBound(index, request, limits, (host, bound) => out.push({ host, bound }) > 0);
  return out;
}

/** A host's free handles of a class: read from the index's levels when it keeps them, else summed over the host's providers. */
type FreeOnHost = (host: CandidateHost, resourceClass: string) => number;

function freeOnHost(index: CandidateIndex, request: PlacementRequest): FreeOnHost {
  if (!index.freeOf) return freeOfClass;
  const levels = new Map<string, FreeLevels | undefined>();
  for (const g of request.groups) for (const need of g.alternatives) levels.set(need.resourceClass, index.freeOf(need.resourceClass));
  return (host, resourceClass) => levels.get(resourceClass)?.byHost.get(host.hostname) ?? 0;
}

/** Bounds below this are bucketed; the few hosts at or above it are sorted. */
const BUCKETS = 1024;

/** `hosts` are within the limits (hostsToTry): only their agents' liveness is asked. */
function bucketed(hosts: readonly CandidateHost[], request: PlacementRequest, limits: PlacementLimits, free: FreeOnHost, visit: BoundVisitor): void {
  const buckets: CandidateHost[][] = [];
  const large: Bounded[] = [];
  const shape = shapeOf(request);
  for (const host of hosts) {
    if (staleHost(limits, host)) continue;
    const b = boundOfShape(shape, (rc) => free(host, rc));
    if (b >= BUCKETS) large.push({ host, bound: b });
    else (buckets[b] ??= []).push(host);
  }
  for (const { host, bound } of large.sort((x, y) => y.bound - x.bound)) if (!visit(host, bound)) return;
  for (let b = buckets.length - 1; b >= 0; b--) for (const host of buckets[b] ?? []) if (!visit(host, b)) return;
}

/** The free handles of every class the groups could use on the host (only on providers open to it when the request tolerates nothing): a bound of both its ready and its free handles. */
export function bound(host: CandidateHost, request: PlacementRequest): number {
  const openOnly = toleratesNothing(request);
  return boundOfShape(shapeOf(request), (rc) => freeOfClass(host, rc, openOnly));
}

/** Hosts by their bound for the request's shape as the index keeps it: largest first, no host's bound worked out. */
function fromBounds(index: CandidateIndex, levels: FreeLevels, limits: PlacementLimits, visit: BoundVisitor): void {
  for (const b of levels.descending()) {
    // Every group needs at least one handle: a host of bound 0 never fits.
    if (b <= 0) return;
    for (const hostname of levels.hostsAt(b)) {
      const host = index.byName.get(hostname);
      if (!host || staleHost(limits, host) || !allowedBy(limits, hostname)) continue;
      if (!visit(host, b)) return;
    }
  }
}

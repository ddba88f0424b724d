/**
 * The hosts a decision tries, in the order of the most their providers could give the request
 * (`bound`: per group, the free handles of the class of its best-provided alternative, summed),
 * largest first. place.ts stops once no later host can beat the choices it keeps.
 *
 * With a host limit, the named hosts' bounds are worked out and bucketed. Without one, on an
 * index that keeps free handles by level (kept-index.ts), the hosts come from the classes' levels,
 * largest first, as the threshold algorithm reads sorted lists: a host not yet reached has at most
 * the current level of each class, so a host reached whose bound is at least the sum of those
 * levels comes next. The search therefore stops after the hosts with the most free handles,
 * without working out the bound of every host offering the classes.
 */
import { allowedBy, hostsToTry, staleHost } from "./candidates.js";
import type { FreeLevels } from "./free-levels.js";
import { freeOfClass } from "./host-choice.js";
import type { CandidateHost, CandidateIndex, PlacementLimits, PlacementRequest } from "./types.js";

export interface Bounded {
  host: CandidateHost;
  bound: number;
}

export function hostsByBound(index: CandidateIndex, request: PlacementRequest, limits: PlacementLimits): Iterable<Bounded> {
  const unlimited = limits.hosts == null && limits.instanceHost == null;
  if (unlimited && index.freeOf) return fromLevels(index, request, limits);
  return bucketed(hostsToTry(index, request, limits), request, limits, freeOnHost(index, request));
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
function* bucketed(hosts: readonly CandidateHost[], request: PlacementRequest, limits: PlacementLimits, free: FreeOnHost): Generator<Bounded> {
  const buckets: CandidateHost[][] = [];
  const large: Bounded[] = [];
  for (const host of hosts) {
    if (staleHost(limits, host)) continue;
    const b = bound(host, request, free);
    if (b >= BUCKETS) large.push({ host, bound: b });
    else (buckets[b] ??= []).push(host);
  }
  yield* large.sort((x, y) => y.bound - x.bound);
  for (let b = buckets.length - 1; b >= 0; b--) for (const host of buckets[b] ?? []) yield { host, bound: b };
}

/** The free handles of every class the groups could use on the host: a bound of both its ready and its free handles. */
export function bound(host: CandidateHost, request: PlacementRequest, free: FreeOnHost = freeOfClass): number {
  let sum = 0;
  for (const g of request.groups) {
    let most = 0;
    for (const need of g.alternatives) most = Math.max(most, free(host, need.resourceClass));
    sum += most;
  }
  return sum;
}

/** One class's hosts, level by level, largest first. */
class LevelCursor {
  private at = 0;
  private hosts: Iterator<string> | null = null;
  private left = 0;

  constructor(readonly levels: FreeLevels | undefined) {}

  /** The most free handles a host not yet read from this class can have (0 once all were read). */
  get level(): number {
    this.settle();
    return this.levels?.descending()[this.at] ?? 0;
  }

  /** Hosts left at the current level (Infinity once all were read: never the cheapest to lower). */
  get remaining(): number {
    this.settle();
    return this.hosts === null ? Infinity : this.left;
  }

  next(): string | undefined {
    this.settle();
    if (this.hosts === null) return undefined;
    this.left--;
    return this.hosts.next().value as string;
  }

  private settle(): void {
    const levels = this.levels?.descending() ?? [];
    while (this.at < levels.length && (this.hosts === null || this.left === 0)) {
      if (this.hosts !== null) {
        this.at++;
        this.hosts = null;
        continue;
      }
      const set = this.levels!.hostsAt(levels[this.at]!);
      this.hosts = set.values();
      this.left = set.size;
    }
    if (this.at >= levels.length) this.hosts = null;
  }
}

function* fromLevels(index: CandidateIndex, request: PlacementRequest, limits: PlacementLimits): Generator<Bounded> {
  const byClass = new Map<string, LevelCursor>();
  for (const g of request.groups) for (const n of g.alternatives) if (!byClass.has(n.resourceClass)) byClass.set(n.resourceClass, new LevelCursor(index.freeOf!(n.resourceClass)));
  const cursors = [...byClass.values()];
  // Per group, the cursors of its alternatives' classes: each host read is weighed without looking a class up.
  const groups = request.groups.map((g) => g.alternatives.map((n) => byClass.get(n.resourceClass)!));
  const boundOf = (hostname: string) => sumOfMost(groups, (c) => c.levels?.byHost.get(hostname) ?? 0);
  const seen = new Set<string>();
  const heap = new MaxHeap();
  for (;;) {
    const threshold = sumOfMost(groups, (c) => c.level);
    // Every group needs at least one handle: a bound of 0 never fits, and neither can any host not yet reached once the threshold is 0.
    const t = Math.max(1, threshold);
    while (heap.size > 0 && heap.top()!.bound >= t) yield heap.pop()!;
    if (threshold === 0) break;
    const cursor = cheapest(cursors);
    const hostname = cursor?.next();
    if (hostname === undefined) break;
    if (seen.has(hostname)) continue;
    seen.add(hostname);
    const host = index.byName.get(hostname);
    if (!host || staleHost(limits, host) || !allowedBy(limits, hostname)) continue;
    const b = boundOf(hostname);
    if (b > 0) heap.push({ host, bound: b });
  }
  while (heap.size > 0 && heap.top()!.bound > 0) yield heap.pop()!;
}

/** Per group, the most of its alternatives' classes' values, summed. */
function sumOfMost(groups: readonly (readonly LevelCursor[])[], value: (c: LevelCursor) => number): number {
  let sum = 0;
  for (const alternatives of groups) {
    let most = 0;
    for (const c of alternatives) most = Math.max(most, value(c));
    sum += most;
  }
  return sum;
}

/** The class whose current level is lowered by reading the fewest hosts (a level above 0). */
function cheapest(cursors: readonly LevelCursor[]): LevelCursor | undefined {
  let best: LevelCursor | undefined;
  for (const c of cursors) if (c.level > 0 && (best === undefined || c.remaining < best.remaining)) best = c;
  return best;
}

/** A binary heap of hosts by bound, largest on top. */
class MaxHeap {
  private readonly items: Bounded[] = [];

  get size(): number {
    return this.items.length;
  }

  top(): Bounded | undefined {
    return this.items[0];
  }

  push(item: Bounded): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]!.bound >= a[i]!.bound) break;
      [a[parent], a[i]] = [a[i]!, a[parent]!];
      i = parent;
    }
  }

  pop(): Bounded | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l]!.bound > a[m]!.bound) m = l;
        if (r < a.length && a[r]!.bound > a[m]!.bound) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }
}

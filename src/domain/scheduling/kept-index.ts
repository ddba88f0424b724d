/**
 * The candidates kept across decisions: the read side puts a host again whenever the read models
 * show it changed (or removes it), instead of indexing the whole fleet for every decision. Besides
 * hosts by name and by class, it keeps each class's free handles per host by level (`FreeLevels`),
 * and, for the request shapes asked for most recently (request-shape.ts), each host's bound by
 * level, so a decision without a host limit reaches the hosts that could give the most first and
 * stops (place.ts) without reading the rest. Answers are those of an index built from scratch of
 * the same hosts (test/domain/scheduling/kept-index.property.test.ts).
 */
import { openToAll } from "./fit.js";
import { FreeLevels } from "./free-levels.js";
import { boundOfShape, shapeKey } from "./request-shape.js";
import type { CandidateHost, CandidateIndex, RequestShape } from "./types.js";

/** Request shapes whose bounds are kept (the least recently asked for is dropped): profiles in use, with room. */
export const KEPT_SHAPES = 32;

interface ShapeBounds {
  shape: RequestShape;
  /** Counting only providers open to a request that tolerates nothing (fit.ts: openToAll). */
  openOnly: boolean;
  levels: FreeLevels;
}

export class KeptCandidates implements CandidateIndex {
  private readonly named = new Map<string, CandidateHost>();
  private readonly free = new Map<string, FreeLevels>();
  /** By shape key, least recently asked for first. */
  private readonly shapes = new Map<string, ShapeBounds>();
  /** Host names sorted; null once a host came or went. */
  private order: string[] | null = [];
  /** `hosts` and `byClass` as of the last change; null until asked for after one. */
  private lists: { hosts: CandidateHost[]; byClass: Map<string, CandidateHost[]> } | null = null;

  constructor(hosts: readonly CandidateHost[] = []) {
    for (const h of hosts) this.put(h);
  }

  /** Adds the host or replaces what was known of it (its providers are kept by uuid, so the order they came in does not matter). */
  put(host: CandidateHost): void {
    const kept: CandidateHost = { ...host, providers: [...host.providers].sort((a, b) => (a.rpUuid < b.rpUuid ? -1 : a.rpUuid > b.rpUuid ? 1 : 0)) };
    const before = this.named.get(host.hostname);
    if (before === undefined) this.order = null;
    this.named.set(host.hostname, kept);
    this.lists = null;
    const free = freeByClass(kept);
    if (before !== undefined) for (const rc of freeByClass(before).keys()) if (!free.has(rc)) this.levelsOf(rc).delete(host.hostname);
    for (const [rc, n] of free) this.levelsOf(rc).set(host.hostname, n);
    let open: Map<string, number> | undefined;
    for (const s of this.shapes.values()) {
      const counted = s.openOnly ? (open ??= freeByClass(kept, true)) : free;
      setBound(s, host.hostname, boundOfShape(s.shape, (rc) => counted.get(rc) ?? 0));
    }
  }

  remove(hostname: string): void {
    const before = this.named.get(hostname);
    if (before === undefined) return;
    this.named.delete(hostname);
    this.order = null;
    this.lists = null;
    for (const rc of freeByClass(before).keys()) this.levelsOf(rc).delete(hostname);
    for (const s of this.shapes.values()) s.levels.delete(hostname);
  }

  get byName(): ReadonlyMap<string, CandidateHost> {
    return this.named;
  }

  get hosts(): readonly CandidateHost[] {
    return this.built().hosts;
  }

  get byClass(): ReadonlyMap<string, readonly CandidateHost[]> {
    return this.built().byClass;
  }

  freeOf(resourceClass: string): FreeLevels | undefined {
    const levels = this.free.get(resourceClass);
    return levels && levels.size > 0 ? levels : undefined;
  }

  /** Kept from the first time a shape is asked for: that first decision reads the hosts offering its classes once. */
  boundsOf(shape: RequestShape, openOnly = false): FreeLevels {
    const key = `${openOnly ? "open" : "all"}\u0002${shapeKey(shape)}`;
    let kept = this.shapes.get(key);
    if (kept) {
      this.shapes.delete(key);
    } else {
      kept = { shape, openOnly, levels: new FreeLevels() };
      const hostnames = new Set<string>();
      for (const rc of new Set(shape.flat())) for (const hostname of this.free.get(rc)?.byHost.keys() ?? []) hostnames.add(hostname);
      for (const hostname of hostnames) {
        const counted = freeByClass(this.named.get(hostname)!, openOnly);
        setBound(kept, hostname, boundOfShape(shape, (rc) => counted.get(rc) ?? 0));
      }
      if (this.shapes.size >= KEPT_SHAPES) this.shapes.delete(this.shapes.keys().next().value!);
    }
    this.shapes.set(key, kept);
    return kept.levels;
  }

  private levelsOf(resourceClass: string): FreeLevels {
    let levels = this.free.get(resourceClass);
    if (!levels) this.free.set(resourceClass, (levels = new FreeLevels()));
    return levels;
  }

  /** Hosts by name, and per class the hosts offering it in the same order: rebuilt only when asked for after a change. */
  private built(): { hosts: CandidateHost[]; byClass: Map<string, CandidateHost[]> } {
    if (this.lists) return this.lists;
    this.order ??= [...this.named.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const hosts = this.order.map((n) => this.named.get(n)!);
    const byClass = new Map<string, CandidateHost[]>();
    for (const h of hosts) {
      for (const rc of new Set(h.providers.map((p) => p.resourceClass))) {
        let list = byClass.get(rc);
        if (!list) byClass.set(rc, (list = []));
        list.push(h);
      }
    }
    return (this.lists = { hosts, byClass });
  }
}

/** Only hosts that could give something are kept (a bound of 0 never fits). */
function setBound(s: ShapeBounds, hostname: string, bound: number): void {
  if (bound > 0) s.levels.set(hostname, bound);
  else s.levels.delete(hostname);
}

/** The host's free handles per class, whatever the providers' traits, taints or state (a bound of what it can give); `openOnly`: on providers open to a request that tolerates nothing. */
export function freeByClass(host: CandidateHost, openOnly = false): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of host.providers) if (!openOnly || openToAll(p)) out.set(p.resourceClass, (out.get(p.resourceClass) ?? 0) + p.free);
  return out;
}

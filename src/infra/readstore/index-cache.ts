/**
 * What the Redis adapter knows of a projection's index families and order indexes, so that a
 * batch resolves its index writes without reading Redis first (see redis-batch.ts).
 */
import type { Write } from "./port.js";

interface Known<V> {
  /** Knows every member: one it has no entry for is absent. */
  complete: boolean;
  m: Map<string, V | null>;
}

/** About 100 MB: beyond, the cache starts over (and reads what it needs, batch by batch). */
const MAX_ENTRIES = 1_000_000;

/**
 * What the adapter knows of one projection's index families (member -> value) and order indexes
 * (member -> score), valid at checkpoint `validAt` only: the projector's expected-checkpoint guard
 * tells whether anyone else wrote since.
 */
export class IndexCache {
  validAt: bigint | null | undefined = undefined;
  /** After a drop the store holds nothing: every family and order index starts complete. */
  private allComplete = false;
  readonly values = new Map<string, Known<string>>();
  readonly scores = new Map<string, Known<number>>();
  /** Since the drop, sorted sets written before anything tracked them: their scores are not known. */
  private readonly writtenUntracked = new Set<string>();
  private partials = 0;
  private entries = 0;

  reset(emptyStore: boolean): void {
    this.values.clear();
    this.scores.clear();
    this.writtenUntracked.clear();
    this.partials = 0;
    this.entries = 0;
    this.allComplete = emptyStore;
    this.validAt = emptyStore ? null : undefined;
  }

  /** Knows every member of every family and order index (since a drop): nothing to read. */
  get knowsAll(): boolean {
    return this.allComplete && this.partials === 0;
  }

  /** A write to a sorted set the cache does not follow: if it follows it later, it cannot know it all. */
  written(key: string): void {
    if (this.allComplete && !this.writtenUntracked.has(key)) {
      this.writtenUntracked.add(key);
      this.entries++;
    }
  }

  value(family: string, member: string): string | null | undefined {
    const known = this.values.get(family);
    if (known) return lookup(known, member);
    return this.allComplete && !this.writtenUntracked.has(family) ? null : undefined;
  }

  score(order: string, member: string): number | null | undefined {
    const known = this.scores.get(order);
    if (known) return lookup(known, member);
    return this.allComplete && !this.writtenUntracked.has(order) ? null : undefined;
  }

  setValue(family: string, member: string, value: string | null): void {
    this.set(this.values, family, member, value);
  }

  setScore(order: string, member: string, score: number | null): void {
    this.set(this.scores, order, member, score);
  }

  /** The key was deleted: nothing is left under it. */
  cleared(key: string): void {
    for (const map of [this.values, this.scores] as Array<Map<string, Known<unknown>>>) {
      const known = map.get(key);
      if (!known) continue;
      if (this.allComplete && !known.complete) this.partials--;
      this.entries -= known.m.size;
      map.set(key, { complete: true, m: new Map() });
    }
    if (this.writtenUntracked.delete(key)) this.entries--;
  }

  tracksScores(key: string): boolean {
    return this.scores.has(key);
  }

  track(kind: "values" | "scores", key: string): void {
    const map = kind === "values" ? this.values : this.scores;
    if (map.has(key)) return;
    const complete = this.allComplete && !this.writtenUntracked.has(key);
    if (this.allComplete && !complete) this.partials++;
    map.set(key, { complete, m: new Map() });
  }

  /** Too much to remember: forget it all (later batches read what they need first). */
  get oversized(): boolean {
    return this.entries > MAX_ENTRIES;
  }

  private set<V>(maps: Map<string, Known<V>>, key: string, member: string, v: V | null): void {
    let known = maps.get(key);
    if (!known) {
      this.track(maps === this.values ? "values" : "scores", key);
      known = maps.get(key)!;
    }
    const had = known.m.has(member);
    // In a complete map an absent member needs no entry; a partial map must remember "absent".
    if (v === null && known.complete) {
      if (had) {
        known.m.delete(member);
        this.entries--;
      }
      return;
    }
    known.m.set(member, v);
    if (!had) this.entries++;
  }
}

function lookup<V>(known: Known<V>, member: string): V | null | undefined {
  const v = known.m.get(member);
  if (v !== undefined) return v;
  return known.complete ? null : undefined;
}

/**
 * Starts following the batch's families and order indexes, and lists the members whose family
 * value or order score the cache does not know: to read before compileBatch.
 */
export function unknowns(writes: readonly Write[], cache: IndexCache) {
  const values = new Map<string, Set<string>>();
  const scores = new Map<string, Set<string>>();
  for (const w of writes) {
    if (w.op !== "index") continue;
    cache.track("values", w.index);
    cache.track("scores", w.order);
  }
  if (cache.knowsAll) return { values, scores };
  const add = (map: Map<string, Set<string>>, key: string, member: string) => {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(member);
  };
  for (const w of writes) {
    if (w.op !== "index") continue;
    if (cache.value(w.index, w.member) === undefined) add(values, w.index, w.member);
    if (w.value !== null && cache.score(w.order, w.member) === undefined) add(scores, w.order, w.member);
  }
  return { values, scores };
}

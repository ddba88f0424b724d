import { compareEntries } from "./keys-and-cursors.js";

interface Entry {
  s: number;
  m: string;
}

const MAX_CHUNK = 512;
/** Up to this many members a set is one sorted array, searched in place (no index map). */
const SMALL = 16;

/**
 * An in-memory sorted set in Redis order ((score, member)): a list of sorted chunks, so inserting
 * or removing in the middle of 200,000 members moves at most one chunk (a sorted array alone
 * would move half the array each time). Most sets are small (an index per object and per request
 * holds a few entries): up to SMALL members a set is a single sorted array without the member
 * index, a fraction of the memory; it gains the index when it grows past that.
 */
export class SortedSet {
  private scores: Map<string, number> | null = null;
  private chunks: Entry[][] = [];

  /**
   * A set of these entries, built at once when they come in Redis order with each member once (as
   * a snapshot holds them), else one by one.
   */
  static of(entries: ReadonlyArray<readonly [member: string, score: number]>): SortedSet {
    if (!inOrder(entries)) return SortedSet.ofEach(entries);
    const all = entries.map(([m, score]) => ({ s: score === 0 ? 0 : score, m }));
    const scores = new Map(all.map((e) => [e.m, e.s]));
    // A member twice (at two scores) is in order too: such a list is built one by one instead.
    if (scores.size !== all.length) return SortedSet.ofEach(entries);
    const set = new SortedSet();
    for (let i = 0; i < all.length; i += MAX_CHUNK / 2) set.chunks.push(all.slice(i, i + MAX_CHUNK / 2));
    if (all.length > SMALL) set.scores = scores;
    return set;
  }

  private static ofEach(entries: ReadonlyArray<readonly [string, number]>): SortedSet {
    const set = new SortedSet();
    for (const [m, score] of entries) set.add(m, score === 0 ? 0 : score);
    return set;
  }

  get size(): number {
    return this.scores ? this.scores.size : (this.chunks[0]?.length ?? 0);
  }

  score(member: string): number | undefined {
    if (this.scores) return this.scores.get(member);
    return this.chunks[0]?.find((e) => e.m === member)?.s;
  }

  has(member: string): boolean {
    return this.score(member) !== undefined;
  }

  /** Returns false when `nx` kept an existing member where it was. */
  add(member: string, score: number, nx = false): boolean {
    const old = this.score(member);
    if (old !== undefined) {
      if (nx || old === score) return false;
      this.removeEntry(old, member);
    }
    this.insertEntry({ s: score, m: member });
    if (this.scores) this.scores.set(member, score);
    else if (this.size > SMALL) this.scores = new Map(this.chunks[0]!.map((e) => [e.m, e.s]));
    return true;
  }

  remove(member: string): boolean {
    const old = this.score(member);
    if (old === undefined) return false;
    this.scores?.delete(member);
    this.removeEntry(old, member);
    return true;
  }

  /** Entries strictly after (score, member), or from the start. */
  *entriesAfter(after?: { score: number; member: string }): Generator<[string, number]> {
    let ci = 0;
    let i = 0;
    if (after) {
      ci = this.chunkFor(after.score, after.member);
      if (ci < this.chunks.length) {
        const chunk = this.chunks[ci]!;
        i = upperBound(chunk, after.score, after.member);
      }
    }
    for (; ci < this.chunks.length; ci++, i = 0) {
      const chunk = this.chunks[ci]!;
      for (; i < chunk.length; i++) yield [chunk[i]!.m, chunk[i]!.s];
    }
  }

  /** Every entry in order, as a list (a snapshot's, or the store's text of a small set). */
  entries(): Array<[string, number]> {
    const out: Array<[string, number]> = [];
    for (const chunk of this.chunks) for (const e of chunk) out.push([e.m, e.s]);
    return out;
  }

  /** How many members are scored at most `s`. */
  countUpTo(s: number): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.chunks[mid]!.at(-1)!.s <= s) lo = mid + 1;
      else hi = mid;
    }
    let n = 0;
    for (let ci = 0; ci < lo; ci++) n += this.chunks[ci]!.length;
    const chunk = this.chunks[lo];
    if (chunk) for (let i = 0; i < chunk.length && chunk[i]!.s <= s; i++) n++;
    return n;
  }

  /** The chunk where (s, m) is or would be: the first whose last entry is >= it. */
  private chunkFor(s: number, m: string): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const last = this.chunks[mid]!.at(-1)!;
      if (compareEntries(last.s, last.m, s, m) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private insertEntry(e: Entry): void {
    if (this.chunks.length === 0) {
      this.chunks.push([e]);
      return;
    }
    let ci = this.chunkFor(e.s, e.m);
    if (ci === this.chunks.length) ci--; // after everything: append to the last chunk
    const chunk = this.chunks[ci]!;
    chunk.splice(upperBound(chunk, e.s, e.m), 0, e);
    if (chunk.length > MAX_CHUNK) this.chunks.splice(ci, 1, chunk.slice(0, MAX_CHUNK / 2), chunk.slice(MAX_CHUNK / 2));
  }

  private removeEntry(s: number, m: string): void {
    const ci = this.chunkFor(s, m);
    const chunk = this.chunks[ci]!;
    const i = upperBound(chunk, s, m) - 1;
    chunk.splice(i, 1);
    if (chunk.length === 0) this.chunks.splice(ci, 1);
  }
}

/** Index of the first entry strictly after (s, m). */
function upperBound(chunk: Entry[], s: number, m: string): number {
  let lo = 0;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const e = chunk[mid]!;
    if (compareEntries(e.s, e.m, s, m) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Strictly increasing in (score, member): sorted, no member twice at one score. */
function inOrder(entries: ReadonlyArray<readonly [string, number]>): boolean {
  for (let i = 1; i < entries.length; i++) {
    const [pm, ps] = entries[i - 1]!;
    const [m, s] = entries[i]!;
    if (typeof s !== "number" || Number.isNaN(s) || compareEntries(ps, pm, s, m) >= 0) return false;
  }
  return entries.length === 0 || (typeof entries[0]![1] === "number" && !Number.isNaN(entries[0]![1]));
}

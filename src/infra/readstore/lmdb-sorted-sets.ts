/**
 * The sorted sets of the LMDB read store (lmdb.ts) over its databases (lmdb-layout.ts): adding and
 * removing members, a page of one index or of an intersection, and removing a key range.
 */
import { EMPTY, isCut, join, orderMember, prefixEnd, readScore, scoreBytes, tailOf, utf8, type LmdbDatabases } from "./lmdb-layout.js";
import { encodeCursor } from "./keys-and-cursors.js";
import type { RangePage } from "./port.js";

/** A decoded range cursor: items strictly after this entry. */
export type Cursor = { score: number; member: string };

/** One index: a page from LMDB's order, its total from the size kept per key (or counted up to `until`). */
export function rangeOne(order: LmdbDatabases["order"], k: Buffer, size: number, after: Cursor | undefined, limit: number, until?: number): RangePage {
  // No T starts with ff: K + S(until) + ff ends after every member scored `until`.
  const end = until === undefined ? prefixEnd(k) : join(k, scoreBytes(until), Buffer.from([0xff]));
  const total = until === undefined ? size : countUpTo(order, k, size, end, until);
  // The first entry after the cursor's: the cursor's own entry followed by one 00 byte.
  const start = after ? join(k, scoreBytes(after.score), tailOf(k, Buffer.from(after.member)).tail, Buffer.from([0])) : firstMember(k);
  const items: RangePage["items"] = [];
  let hasMore = false;
  for (const e of order.getKeys({ start, end, limit: limit + 1 })) {
    if (items.length === limit) {
      hasMore = true;
      break;
    }
    const member = orderMember(order, e, k.length);
    const score = readScore(e, k.length);
    items.push({ member, score, cursor: encodeCursor(score, member) });
  }
  return { items, total, hasMore };
}

/**
 * Members of a (non-empty) index scored at most `until`, without walking it when its first or
 * last entry answers, else counting the side that the scores say is smaller.
 */
function countUpTo(order: LmdbDatabases["order"], k: Buffer, size: number, end: Buffer, until: number): number {
  const edge = (reverse: boolean) => readScore([...order.getKeys({ start: reverse ? prefixEnd(k) : firstMember(k), end: reverse ? firstMember(k) : prefixEnd(k), reverse, limit: 1 })][0]!, k.length);
  const [low, high] = [edge(false), edge(true)];
  if (high <= until) return size;
  if (low > until) return 0;
  if (until - low <= high - until) return order.getKeysCount({ start: firstMember(k), end });
  return size - order.getKeysCount({ start: end, end: prefixEnd(k) });
}

/** Several indexes: walks the smallest, looks its members up in the others; scores come from the first. */
export function intersect(scores: LmdbDatabases["scores"], first: Buffer, rest: Buffer[], smallest: Buffer, after: Cursor | undefined, limit: number, until = Infinity): RangePage {
  const all: Array<{ score: number; member: Buffer }> = [];
  for (const { key: e, value } of scores.getRange({ start: smallest, end: prefixEnd(smallest) })) {
    const member = Buffer.from(isCut(e, smallest.length, smallest.length) ? value.subarray(8) : e.subarray(smallest.length));
    const s = scores.get(join(first, tailOf(first, member).tail));
    if (s === undefined || !rest.every((k) => scores.doesExist(join(k, tailOf(k, member).tail)))) continue;
    const score = readScore(s);
    if (score <= until) all.push({ score, member });
  }
  const cmp = (sa: number, ma: Buffer, sb: number, mb: Buffer) => (sa !== sb ? (sa < sb ? -1 : 1) : Buffer.compare(ma, mb));
  all.sort((a, b) => cmp(a.score, a.member, b.score, b.member));
  const cursor = after && { score: after.score, member: Buffer.from(after.member) };
  const from = cursor ? all.findIndex((e) => cmp(e.score, e.member, cursor.score, cursor.member) > 0) : 0;
  const page = from < 0 ? [] : all.slice(from, from + limit);
  const items = page.map(({ score, member }) => ({ member: utf8(member), score, cursor: encodeCursor(score, utf8(member)) }));
  return { items, total: all.length, hasMore: from >= 0 && from + limit < all.length };
}

/**
 * A key's member count: the order database's entry K (no S, no T: it sorts before the key's
 * members, on the page of its first ones, so that counting a new member seldom writes another
 * page). A store written before kept it in `sizes`, which is read while the count is there.
 */
export function readCount(db: Pick<LmdbDatabases, "order" | "sizes">, k: Buffer): number {
  return storedCount(db, k).n;
}

/** The count, and whether it is still in `sizes`. */
function storedCount(db: Pick<LmdbDatabases, "order" | "sizes">, k: Buffer): { n: number; inSizes: boolean } {
  const stored = db.order.get(k);
  if (stored !== undefined) return { n: countOf(stored), inSizes: false };
  const old = db.sizes.get(k);
  return { n: old ?? 0, inSizes: old !== undefined };
}

/** The first entry of a key's members in the order database (after its count, K itself). */
export const firstMember = (k: Buffer): Buffer => join(k, ZERO);
const ZERO = Buffer.from([0]);

const countOf = (stored: Uint8Array): number => new DataView(stored.buffer, stored.byteOffset, stored.byteLength).getFloat64(0);

function countBytes(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(n);
  return b;
}

/**
 * The member counts of the keys one batch touches: each read once and written back once at the
 * end of the batch (`flush`), instead of a read and a write for every member added or removed
 * (the audit index adds several members to one request's key in one batch). A count that was in
 * `sizes` moves to the order database when it is written.
 */
export class SizeTally {
  private readonly counts = new Map<string, { k: Buffer; n: number; changed: boolean; inSizes: boolean }>();

  constructor(private readonly db: Pick<LmdbDatabases, "order" | "sizes">) {}

  add(k: Buffer, by: number): void {
    const e = this.entry(k);
    e.n += by;
    e.changed = true;
  }

  /** The key is gone (del): its count is 0 from here on. */
  clear(k: Buffer): void {
    const e = this.entry(k);
    e.n = 0;
    e.changed = true;
  }

  /** Writes the counts that changed (inside the batch's transaction). */
  flush(): void {
    for (const e of this.counts.values()) {
      if (!e.changed) continue;
      if (e.n > 0) this.db.order.putSync(e.k, countBytes(e.n));
      else this.db.order.removeSync(e.k);
      if (e.inSizes) this.db.sizes.removeSync(e.k);
    }
    this.counts.clear();
  }

  private entry(k: Buffer) {
    const id = k.toString("latin1");
    let e = this.counts.get(id);
    if (!e) this.counts.set(id, (e = { k, ...storedCount(this.db, k), changed: false }));
    return e;
  }
}

export function zadd(db: LmdbDatabases, sizes: SizeTally, k: Buffer, member: Buffer, score: number, nx: boolean): void {
  const { scores, order } = db;
  const { tail, cut } = tailOf(k, member);
  const at = join(k, tail);
  const s = scoreBytes(score); // -0 as 0
  const stored = cut ? join(s, cut) : s;
  // A new member (the common case: the audit index adds one an event) is found new and written in
  // one B-tree descent: the put refuses a member that is there already.
  if (putIfAbsent(scores, at, stored)) {
    sizes.add(k, 1);
    order.putSync(join(k, s, tail), cut ?? EMPTY);
    return;
  }
  const old = scores.get(at)!;
  if (nx || Buffer.compare(old.subarray(0, 8), s) === 0) return;
  order.removeSync(join(k, old.subarray(0, 8), tail));
  scores.putSync(at, stored);
  order.putSync(join(k, s, tail), cut ?? EMPTY);
}

/**
 * A put that leaves an existing entry as it is; whether it wrote. Inside a write transaction
 * lmdb-js's putSync says whether the put took place (its typings say void).
 */
function putIfAbsent(d: LmdbDatabases["scores"], key: Buffer, value: Buffer): boolean {
  const putSync = d.putSync as unknown as (this: typeof d, k: Buffer, v: Buffer, o: { noOverwrite: true }) => boolean;
  return putSync.call(d, key, value, { noOverwrite: true });
}

export function zrem(db: LmdbDatabases, sizes: SizeTally, k: Buffer, member: Buffer): void {
  const { scores, order } = db;
  const { tail } = tailOf(k, member);
  const at = join(k, tail);
  const old = scores.get(at);
  if (old === undefined) return;
  scores.removeSync(at);
  order.removeSync(join(k, old.subarray(0, 8), tail));
  sizes.add(k, -1);
}

/** Removes every entry in [start, end), a thousand keys at a time (no cursor over changing pages). */
export function removeRange(db: LmdbDatabases[keyof LmdbDatabases], start: Uint8Array, end: Uint8Array): void {
  for (;;) {
    const keys = Array.from(db.getKeys({ start, end, limit: 1000 }));
    for (const key of keys) db.removeSync(key);
    if (keys.length < 1000) return;
  }
}

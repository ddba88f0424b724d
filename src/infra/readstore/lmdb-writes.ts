/**
 * The writes of the LMDB read store (lmdb.ts), each run inside one write transaction over its
 * databases (lmdb-layout.ts): where the transaction runs (the caller's thread or the store's write
 * thread, lmdb-writer.ts) does not change what they do. Every argument and result is plain data
 * that can cross to a worker thread (lmdb-writer.ts: how); a failure throws, which aborts the
 * transaction, so nothing of a failed write is committed.
 */
import { encodeKey, fieldValue, join, prefixEnd, prepareBatch, readField, readScore, tailOf, type LmdbDatabases, type Prepared } from "./lmdb-layout.js";
import { removeRange, SizeTally, zadd, zrem } from "./lmdb-sorted-sets.js";
import { otherLog, stillOrBack } from "./keys-and-cursors.js";
import { CheckpointMismatchError, type Origin, type Write } from "./port.js";

export interface BatchArgs {
  projection: string;
  writes: readonly Write[];
  checkpoint: bigint;
  expected?: bigint | null;
  origin?: Origin;
}

/** The writes by name: what a write thread is asked to run (lmdb-write-thread.ts). */
export const WRITES = {
  /** A projector batch, checked against the checkpoint it expects (the port's guard). Validated by the caller. */
  applyBatch(db: LmdbDatabases, a: BatchArgs): void {
    const prepared = prepareBatch(a.writes);
    const name = Buffer.from(a.projection);
    const meta = db.meta.get(name);
    const current = meta?.checkpoint == null ? undefined : BigInt(meta.checkpoint);
    const guardFails = a.expected !== undefined && (a.expected === null ? current !== undefined : current !== a.expected);
    if (guardFails || otherLog(meta?.log, a.origin) || (current !== undefined && stillOrBack(a.checkpoint, current, a.expected))) {
      throw new CheckpointMismatchError(a.projection, a.expected, current, a.checkpoint);
    }
    const sizes = new SizeTally(db);
    for (const w of prepared) apply(db, sizes, w);
    sizes.flush();
    const stamp = a.origin ? { log: a.origin.log, event: a.origin.event } : {};
    db.meta.putSync(name, { checkpoint: a.checkpoint.toString(), serving: meta?.serving ?? false, ...stamp });
  },

  drop(db: LmdbDatabases, a: { projection: string; prefix: string }): void {
    const start = Buffer.from(a.prefix);
    for (const d of [db.fields, db.scores, db.order, db.sizes]) removeRange(d, start, prefixEnd(start));
    db.meta.removeSync(Buffer.from(a.projection));
  },

  /** Whether the mark was set: only while the projection is at `checkpoint`. */
  markServing(db: LmdbDatabases, a: { projection: string; checkpoint: bigint | null }): boolean {
    const name = Buffer.from(a.projection);
    const meta = db.meta.get(name);
    if ((meta?.checkpoint ?? null) !== (a.checkpoint?.toString() ?? null)) return false;
    db.meta.putSync(name, { ...meta, checkpoint: meta?.checkpoint ?? null, serving: true });
    return true;
  },

  unmarkServing(db: LmdbDatabases, a: { projection: string }): void {
    const name = Buffer.from(a.projection);
    const meta = db.meta.get(name);
    if (meta?.checkpoint == null) db.meta.removeSync(name);
    else db.meta.putSync(name, { ...meta, serving: false });
  },

  flushAll(db: LmdbDatabases): void {
    for (const d of Object.values(db)) d.clearSync();
  },
};

export type WriteName = keyof typeof WRITES;
export type WriteArgs<N extends WriteName> = Parameters<(typeof WRITES)[N]>[1];
export type WriteResult<N extends WriteName> = ReturnType<(typeof WRITES)[N]>;

/** Applies one write of a batch. */
function apply(db: LmdbDatabases, sizes: SizeTally, w: Prepared): void {
  const { fields, scores, order } = db;
  switch (w.op) {
    case "put":
      for (const [f, json] of w.fields) {
        const { tail, cut } = tailOf(w.k, f);
        fields.putSync(join(w.k, tail), fieldValue(cut, json));
      }
      return;
    case "unset":
      for (const f of w.fields) fields.removeSync(join(w.k, tailOf(w.k, f).tail));
      return;
    case "del":
      for (const d of [fields, scores, order]) removeRange(d, w.k, prefixEnd(w.k));
      sizes.clear(w.k);
      return;
    case "zadd":
      zadd(db, sizes, w.k, w.member, w.score, w.nx);
      return;
    case "zrem":
      zrem(db, sizes, w.k, w.member);
      return;
    case "index": {
      // The family's doc, member -> the value it is filed under.
      const { tail, cut } = tailOf(w.k, w.member);
      const at = join(w.k, tail);
      const stored = fields.get(at);
      const old = stored === undefined ? null : (readField(at, w.k.length, stored)[1] as string);
      if (old === w.value) return;
      if (old !== null) zrem(db, sizes, encodeKey(`${w.index}:${old}`), w.member);
      if (w.value === null) {
        fields.removeSync(at);
        return;
      }
      const s = scores.get(join(w.order, tailOf(w.order, w.member).tail));
      zadd(db, sizes, w.family!, w.member, s === undefined ? 0 : readScore(s), false);
      fields.putSync(at, fieldValue(cut, JSON.stringify(w.value)));
      return;
    }
  }
}

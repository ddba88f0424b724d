import { mkdir } from "node:fs/promises";
import { open, type RootDatabase } from "lmdb";
import { decodeKey, encodeKey, fieldValue, join, openDatabases, orderMember, prefixEnd, prepareBatch, readableKey, readField, readScore, tailOf, type LmdbDatabases, type Meta, type Prepared } from "./lmdb-layout.js";
import { intersect, rangeOne, removeRange, zadd, zrem } from "./lmdb-sorted-sets.js";
import { clearUnsynced, markUnsynced } from "./lmdb-unsynced.js";
import { CheckpointMismatchError, ReadStoreUnavailableError } from "./port.js";
import { otherLog, stillOrBack, decodeCursor, keyPrefix, projectionsOfKeys, validateBatch } from "./keys-and-cursors.js";
import type { Doc, Origin, RangeOptions, RangePage, ReadStore, Stamp, StoreDump, Write } from "./port.js";

/**
 * The read store on disk: Redis semantics (those of memory.ts) in one LMDB environment (its
 * layout: lmdb-layout.ts; its sorted sets: lmdb-sorted-sets.ts), for read models that grow with
 * the log (the audit index): they cost no JS heap and outlive the process, checkpoints and serving
 * marks included. Nothing of the data is kept in memory; reads are synchronous LMDB reads, so a
 * read sees one snapshot.
 *
 * A batch is validated and encoded first, then applied in an LMDB write transaction: the
 * checkpoint guard is checked inside it, and a failing guard (or any error) aborts it, so nothing
 * is written. Transactions are lmdb's asynchronous ones: those asked for in one turn of the event
 * loop commit together, on lmdb's writer thread, and each call resolves once its writes are
 * committed (a synchronous commit per batch took a tenth of the server's CPU under a boot storm).
 *
 * Durability: commits are not synced (noSync), which costs a third of a synced commit's CPU; a
 * machine crash could then corrupt the file, so the directory is marked while the store is open
 * and a store that may not have survived a machine restart starts empty, for the projector to
 * rebuild from the log (lmdb-unsynced.ts). A process that dies loses nothing.
 */
export interface LmdbReadStoreOptions {
  /** Awaited before the first batch is written (until it resolves once): disk-index.ts records there which log the model is of. */
  beforeFirstWrite?: () => Promise<void>;
  /** Awaited once the environment is closed: disk-index.ts lets go of the directory. */
  afterClose?: () => Promise<void>;
}

export class LmdbReadStore implements ReadStore {
  readonly kind = "lmdb" as const;
  private guardReads = false;

  private constructor(
    private readonly env: RootDatabase,
    private readonly db: LmdbDatabases,
    private readonly dir: string,
    private beforeFirstWrite: (() => Promise<void>) | undefined,
    private readonly afterClose: (() => Promise<void>) | undefined,
  ) {}

  /** Opens (creating if needed) the store in directory `dir`; empty if it may not have survived a machine restart (lmdb-unsynced.ts). */
  static async open(dir: string, options: LmdbReadStoreOptions = {}): Promise<LmdbReadStore> {
    await mkdir(dir, { recursive: true });
    await markUnsynced(dir);
    const env = open({ path: dir, maxDbs: 8, noSync: true });
    return new LmdbReadStore(env, openDatabases(env), dir, options.beforeFirstWrite, options.afterClose);
  }

  async applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<void> {
    validateBatch(projection, writes, checkpoint);
    const prepared = prepareBatch(writes);
    if (this.beforeFirstWrite) {
      await this.beforeFirstWrite();
      this.beforeFirstWrite = undefined;
    }
    const name = Buffer.from(projection);
    await this.write(() => {
      const meta = this.db.meta.get(name);
      const current = meta?.checkpoint == null ? undefined : BigInt(meta.checkpoint);
      const guardFails = expected !== undefined && (expected === null ? current !== undefined : current !== expected);
      if (guardFails || otherLog(meta?.log, origin) || (current !== undefined && stillOrBack(checkpoint, current, expected))) {
        throw new CheckpointMismatchError(projection, expected, current, checkpoint);
      }
      for (const w of prepared) this.apply(w);
      const stamp = origin ? { log: origin.log, event: origin.event } : {};
      this.db.meta.putSync(name, { checkpoint: checkpoint.toString(), serving: meta?.serving ?? false, ...stamp });
    });
  }

  async getCheckpoint(projection: string): Promise<bigint | undefined> {
    keyPrefix(projection);
    const cp = this.meta(projection)?.checkpoint;
    return cp == null ? undefined : BigInt(cp);
  }

  async getCheckpoints(projections: readonly string[]): Promise<Array<bigint | undefined>> {
    return Promise.all(projections.map((p) => this.getCheckpoint(p)));
  }

  async getStamps(projections: readonly string[]): Promise<Array<Stamp | undefined>> {
    return projections.map((p) => {
      keyPrefix(p);
      const meta = this.meta(p);
      if (meta?.checkpoint == null) return undefined;
      const origin = meta.log != null && meta.event != null ? { origin: { log: meta.log, event: meta.event } } : {};
      return { checkpoint: BigInt(meta.checkpoint), ...origin };
    });
  }

  watchReconnects(): () => void {
    return () => undefined;
  }

  async drop(projection: string): Promise<void> {
    const start = Buffer.from(keyPrefix(projection));
    await this.write(() => {
      for (const db of [this.db.fields, this.db.scores, this.db.order, this.db.sizes]) removeRange(db, start, prefixEnd(start));
      this.db.meta.removeSync(Buffer.from(projection));
    });
  }

  async markServing(projection: string, checkpoint: bigint | null): Promise<boolean> {
    keyPrefix(projection);
    const name = Buffer.from(projection);
    return this.write(() => {
      const meta = this.db.meta.get(name);
      if ((meta?.checkpoint ?? null) !== (checkpoint?.toString() ?? null)) return false;
      this.db.meta.putSync(name, { ...meta, checkpoint: meta?.checkpoint ?? null, serving: true });
      return true;
    });
  }

  async unmarkServing(projection: string): Promise<void> {
    keyPrefix(projection);
    const name = Buffer.from(projection);
    await this.write(() => {
      const meta = this.db.meta.get(name);
      if (meta?.checkpoint == null) this.db.meta.removeSync(name);
      else this.db.meta.putSync(name, { ...meta, serving: false });
    });
  }

  async serving(projections: readonly string[]): Promise<boolean[]> {
    return projections.map((p) => this.meta(p)?.serving === true);
  }

  guarded(): ReadStore {
    const view = Object.create(this) as this;
    view.guardReads = true;
    return view;
  }

  /** Forgets everything (tests of the projector's self-healing, as a Redis FLUSHALL). */
  async flushAll(): Promise<void> {
    await this.write(() => {
      for (const db of Object.values(this.db)) db.clearSync();
    });
  }

  async getDocs(keys: readonly string[]): Promise<Array<Doc | null>> {
    this.guard(keys);
    return keys.map((key) => {
      const k = readableKey(key);
      if (!k) return null;
      let doc: Doc | null = null;
      for (const { key: e, value } of this.db.fields.getRange({ start: k, end: prefixEnd(k) })) {
        const [field, v] = readField(e, k.length, value);
        (doc ??= {})[field] = v;
      }
      return doc;
    });
  }

  async getMembers(keys: readonly string[]): Promise<string[][]> {
    this.guard(keys);
    return keys.map((key) => {
      const k = readableKey(key);
      return k ? Array.from(this.db.order.getKeys({ start: k, end: prefixEnd(k) }), (e) => orderMember(this.db.order, e, k.length)) : [];
    });
  }

  async count(keys: readonly string[]): Promise<number[]> {
    this.guard(keys);
    return keys.map((key) => this.size(readableKey(key)));
  }

  async range(keys: readonly string[], options: RangeOptions): Promise<RangePage> {
    if (keys.length === 0) throw new RangeError("range needs at least one key");
    this.guard(keys);
    const after = options.after === undefined ? undefined : decodeCursor(options.after);
    const limit = Math.max(0, options.limit);
    const ks = keys.map(readableKey);
    const sizes = ks.map((k) => this.size(k));
    if (sizes.includes(0)) return { items: [], total: 0, hasMore: false };
    const [first, ...rest] = ks as [Buffer, ...Buffer[]];
    if (rest.length === 0) return rangeOne(this.db.order, first, sizes[0]!, after, limit, options.until);
    return intersect(this.db.scores, first, rest, ks[sizes.indexOf(Math.min(...sizes))]!, after, limit, options.until);
  }

  async dump(projection: string): Promise<StoreDump> {
    const start = Buffer.from(keyPrefix(projection));
    const end = prefixEnd(start);
    const hashes = new Map<string, Record<string, unknown>>();
    for (const { key: e, value } of this.db.fields.getRange({ start, end })) {
      const { key, end: at } = decodeKey(e);
      const [field, v] = readField(e, at, value);
      if (!hashes.has(key)) hashes.set(key, {});
      hashes.get(key)![field] = v;
    }
    const zsets = new Map<string, Array<[string, number]>>();
    for (const e of this.db.order.getKeys({ start, end })) {
      const { key, end: at } = decodeKey(e);
      if (!zsets.has(key)) zsets.set(key, []);
      zsets.get(key)!.push([orderMember(this.db.order, e, at), readScore(e, at)]);
    }
    const keys: StoreDump["keys"] = {};
    for (const k of [...hashes.keys(), ...zsets.keys()].sort()) {
      const h = hashes.get(k);
      keys[k] = h ? { hash: Object.fromEntries(Object.keys(h).sort().map((f) => [f, h[f]])) } : { zset: zsets.get(k)! };
    }
    return { checkpoint: this.meta(projection)?.checkpoint ?? null, keys };
  }

  /** Syncs what was committed, closes, and clears the directory's mark (lmdb-unsynced.ts). */
  async close(): Promise<void> {
    const env = this.env as RootDatabase & { sync(done: (err?: Error) => void): void };
    await new Promise<void>((resolve, reject) => env.sync((err) => (err ? reject(err) : resolve())));
    await this.env.close();
    await clearUnsynced(this.dir);
    await this.afterClose?.();
  }

  /** One synchronous write transaction (no sync to disk: a fraction of a millisecond); aborted, and rejected, when `fn` throws. */
  private async write<T>(fn: () => T): Promise<T> {
    return this.env.transaction(fn);
  }

  private meta(projection: string): Meta | undefined {
    return this.db.meta.get(Buffer.from(projection));
  }

  /** With guardReads: refuses reads of a projection not marked serving (same snapshot as the read). */
  private guard(keys: readonly string[]): void {
    if (!this.guardReads) return;
    const missing = projectionsOfKeys(keys).filter((p) => this.meta(p)?.serving !== true);
    if (missing.length) throw new ReadStoreUnavailableError(missing, `${missing.join(", ")} not serving`);
  }

  private size(k: Buffer | undefined): number {
    return k ? (this.db.sizes.get(k) ?? 0) : 0;
  }

  /** Applies one write inside the batch's transaction. */
  private apply(w: Prepared): void {
    const { fields, scores, order, sizes } = this.db;
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
        for (const db of [fields, scores, order]) removeRange(db, w.k, prefixEnd(w.k));
        sizes.removeSync(w.k);
        return;
      case "zadd":
        zadd(this.db, w.k, w.member, w.score, w.nx);
        return;
      case "zrem":
        zrem(this.db, w.k, w.member);
        return;
      case "index": {
        // The family's doc, member -> the value it is filed under.
        const { tail, cut } = tailOf(w.k, w.member);
        const at = join(w.k, tail);
        const stored = fields.get(at);
        const old = stored === undefined ? null : (readField(at, w.k.length, stored)[1] as string);
        if (old === w.value) return;
        if (old !== null) zrem(this.db, encodeKey(`${w.index}:${old}`), w.member);
        if (w.value === null) {
          fields.removeSync(at);
          return;
        }
        const s = scores.get(join(w.order, tailOf(w.order, w.member).tail));
        zadd(this.db, w.family!, w.member, s === undefined ? 0 : readScore(s), false);
        fields.putSync(at, fieldValue(cut, JSON.stringify(w.value)));
        return;
      }
    }
  }
}

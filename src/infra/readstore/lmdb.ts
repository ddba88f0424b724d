import { mkdir } from "node:fs/promises";
import { open, type RootDatabase } from "lmdb";
import { decodeKey, openDatabases, orderMember, prefixEnd, readableKey, readField, readScore, type LmdbDatabases, type Meta } from "./lmdb-layout.js";
import { firstMember, intersect, rangeOne, readCount } from "./lmdb-sorted-sets.js";
import { clearUnsynced, markUnsynced } from "./lmdb-unsynced.js";
import { SteadyWriteback, WRITEBACK_EVERY_MS } from "./lmdb-writeback.js";
import { inProcessWriter, threadWriter, writeThreadAvailable, type LmdbWriter } from "./lmdb-writer.js";
import type { WriteArgs, WriteName, WriteResult } from "./lmdb-writes.js";
import { ReadStoreUnavailableError } from "./port.js";
import { decodeCursor, keyPrefix, projectionsOfKeys, setDocField, validateBatch } from "./keys-and-cursors.js";
import type { Doc, Origin, RangeOptions, RangePage, ReadStore, Stamp, StoreDump, Write } from "./port.js";

/**
 * The read store on disk: Redis semantics (those of memory.ts) in one LMDB environment (its
 * layout: lmdb-layout.ts; its sorted sets: lmdb-sorted-sets.ts), for read models that grow with
 * the log (the audit index): they cost no JS heap and outlive the process, checkpoints and serving
 * marks included. Nothing of the data is kept in memory; reads are synchronous LMDB reads, so a
 * read sees one snapshot.
 *
 * A batch is validated first, then encoded and applied in an LMDB write transaction
 * (lmdb-writes.ts): the checkpoint guard is checked inside it, and a failing guard (or any error)
 * aborts it, so nothing is written. Transactions are lmdb's asynchronous ones: those asked for
 * together commit together, on lmdb's writer thread, and each call resolves once its writes are
 * committed (a synchronous commit per batch took a tenth of the server's CPU under a boot storm).
 * With `writeThread` they are asked for on a thread of the store's own (lmdb-writer.ts), which
 * takes their encoding off the caller's thread.
 *
 * Durability: commits are not synced (noSync), which costs a third of a synced commit's CPU; a
 * machine crash could then corrupt the file, so the directory is marked while the store is open
 * and a store that may not have survived a machine restart starts empty, for the projector to
 * rebuild from the log (lmdb-unsynced.ts). A process that dies loses nothing. While it takes
 * writes, the store is synced every half second in the background (lmdb-writeback.ts), so its
 * pages reach the disk steadily rather than in the kernel's bursts.
 */
export interface LmdbReadStoreOptions {
  /** Awaited before the first batch is written (until it resolves once): disk-index.ts records there which log the model is of. */
  beforeFirstWrite?: () => Promise<void>;
  /** Awaited once the environment is closed: disk-index.ts lets go of the directory. */
  afterClose?: () => Promise<void>;
  /** Writes on a thread of the store's own where its compiled script exists (lmdb-writer.ts); default: on the caller's thread. */
  writeThread?: boolean;
}

export class LmdbReadStore implements ReadStore {
  readonly kind = "lmdb" as const;
  private guardReads = false;

  private constructor(
    private readonly env: RootDatabase,
    private readonly db: LmdbDatabases,
    private readonly writer: LmdbWriter,
    private readonly dir: string,
    private beforeFirstWrite: (() => Promise<void>) | undefined,
    private readonly afterClose: (() => Promise<void>) | undefined,
    private readonly writeback = new SteadyWriteback(() => syncEnv(env), WRITEBACK_EVERY_MS),
  ) {}

  /** Opens (creating if needed) the store in directory `dir`; empty if it may not have survived a machine restart (lmdb-unsynced.ts). */
  static async open(dir: string, options: LmdbReadStoreOptions = {}): Promise<LmdbReadStore> {
    await mkdir(dir, { recursive: true });
    await markUnsynced(dir);
    const settings = { maxDbs: 8, noSync: true };
    const env = open({ path: dir, ...settings });
    const db = openDatabases(env);
    const writer = options.writeThread && writeThreadAvailable() ? threadWriter(dir, settings, env) : inProcessWriter(env, db);
    return new LmdbReadStore(env, db, writer, dir, options.beforeFirstWrite, options.afterClose);
  }

  async applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<void> {
    validateBatch(projection, writes, checkpoint);
    if (this.beforeFirstWrite) {
      await this.beforeFirstWrite();
      this.beforeFirstWrite = undefined;
    }
    await this.write("applyBatch", { projection, writes, checkpoint, expected, origin });
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
    await this.write("drop", { projection, prefix: keyPrefix(projection) });
  }

  async markServing(projection: string, checkpoint: bigint | null): Promise<boolean> {
    keyPrefix(projection);
    return this.write("markServing", { projection, checkpoint });
  }

  async unmarkServing(projection: string): Promise<void> {
    keyPrefix(projection);
    await this.write("unmarkServing", { projection });
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
    await this.write("flushAll", undefined);
  }

  async getDocs(keys: readonly string[]): Promise<Array<Doc | null>> {
    this.guard(keys);
    return keys.map((key) => {
      const k = readableKey(key);
      if (!k) return null;
      let doc: Doc | null = null;
      for (const { key: e, value } of this.db.fields.getRange({ start: k, end: prefixEnd(k) })) {
        const [field, v] = readField(e, k.length, value);
        setDocField((doc ??= {}), field, v);
      }
      return doc;
    });
  }

  async getMembers(keys: readonly string[]): Promise<string[][]> {
    this.guard(keys);
    return keys.map((key) => {
      const k = readableKey(key);
      return k ? Array.from(this.db.order.getKeys({ start: firstMember(k), end: prefixEnd(k) }), (e) => orderMember(this.db.order, e, k.length)) : [];
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
      setDocField(hashes.get(key)!, field, v);
    }
    const zsets = new Map<string, Array<[string, number]>>();
    for (const e of this.db.order.getKeys({ start, end })) {
      const { key, end: at } = decodeKey(e);
      if (at === e.length) continue; // the key's count
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

  /** Whether writes run on the store's own thread. */
  get writesOnThread(): boolean {
    return this.writer.thread;
  }

  /** Syncs what was committed, closes, and clears the directory's mark (lmdb-unsynced.ts). */
  async close(): Promise<void> {
    await this.writer.close();
    await this.writeback.stop();
    await syncEnv(this.env);
    await this.env.close();
    await clearUnsynced(this.dir);
    await this.afterClose?.();
  }

  private async write<N extends WriteName>(name: N, args: WriteArgs<N>): Promise<WriteResult<N>> {
    try {
      return await this.writer.run(name, args);
    } finally {
      this.writeback.written();
    }
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
    return k ? readCount(this.db, k) : 0;
  }
}

/** A forced sync of the environment (lmdb-js runs it on libuv's thread pool). */
function syncEnv(env: RootDatabase): Promise<void> {
  const syncing = env as RootDatabase & { sync(done: (err?: Error) => void): void };
  return new Promise<void>((resolve, reject) => syncing.sync((err) => (err ? reject(err) : resolve())));
}

import { CheckpointMismatchError, ReadStoreUnavailableError } from "./port.js";
import { otherLog, stillOrBack, decodeCursor, encodeCursor, encodeFields, keyPrefix, projectionsOfKeys, validateBatch, compareEntries } from "./keys-and-cursors.js";
import type { Doc, Origin, RangeOptions, RangePage, ReadStore, Stamp, StoreDump, Write } from "./port.js";
import { SortedSet } from "./sorted-set.js";
import { ModelCapture, rawText, type HashContent, type RawJson, type ZsetContent } from "./memory-capture.js";
import { PartitionedMap } from "./partitioned-map.js";

export { rawText, type RawJson } from "./memory-capture.js";

/**
 * Everything one projection holds, with its checkpoint, as one moment of the store (a snapshot's
 * content: memory-snapshots.ts). Fields stay JSON-encoded, as stored.
 */
export interface CapturedModel {
  checkpoint: bigint;
  origin?: Origin;
  /** A hash's fields, or (from and back to a snapshot) the JSON text of that array, not parsed yet. */
  hashes: Array<[key: string, fields: Array<[field: string, json: string]> | RawJson]>;
  /** A sorted set's entries in Redis order, or (from and back to a snapshot) the JSON text of that array, not parsed yet. */
  zsets: Array<[key: string, entries: Array<[member: string, score: number]>| RawJson]>;
}

/** A field as Redis would hold it (JSON), and its decoded value once somebody read it. */
interface Field {
  json: string;
  value?: unknown;
}
type Hash = Map<string, Field>;

/**
 * The read store of the embedded mode (and of tests): Redis semantics in process memory. Values
 * are JSON-encoded on write, as in Redis, so both adapters return equal values. A field is decoded
 * on its first read and then shared, deeply frozen, by every later read until it is written again
 * (reads outnumber writes; a caller that tried to change what it read would throw).
 * A batch is validated, then applied without an await: atomic.
 */
export class MemoryReadStore implements ReadStore {
  readonly kind = "memory" as const;
  /** A hash loaded from a snapshot stays its text until first used (a restart parses only what it reads). */
  private readonly hashes = new PartitionedMap<Hash | RawJson>();
  /** A sorted set loaded from a snapshot likewise. */
  private readonly zsets = new PartitionedMap<SortedSet | RawJson>();
  /** Snapshots being written, per projection: they keep what a key held before a write changes it. */
  private readonly captures = new Map<string, Set<ModelCapture>>();
  private readonly checkpoints = new Map<string, bigint>();
  private readonly origins = new Map<string, Origin>();
  private readonly servingNames = new Set<string>();
  /** Writes applied per projection since this store was made (the snapshots' measure of how much changed). */
  private readonly writeCounts = new Map<string, number>();
  private guardReads = false;

  async applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<void> {
    validateBatch(projection, writes, checkpoint);
    const current = this.checkpoints.get(projection);
    const guardFails = expected !== undefined && (expected === null ? current !== undefined : current !== expected);
    if (guardFails || otherLog(this.origins.get(projection)?.log, origin) || (current !== undefined && stillOrBack(checkpoint, current, expected))) {
      throw new CheckpointMismatchError(projection, expected, current, checkpoint);
    }
    // Encode first: a value that is not JSON fails the batch before anything is written.
    const encoded = writes.map((w) => (w.op === "put" ? encodeFields(w.key, w.fields) : undefined));
    const open = this.captures.get(projection);
    writes.forEach((w, i) => {
      if (open) for (const c of open) this.saving(c, w);
      this.apply(w, encoded[i]);
    });
    this.writeCounts.set(projection, (this.writeCounts.get(projection) ?? 0) + writes.length);
    this.checkpoints.set(projection, checkpoint);
    if (origin) this.origins.set(projection, { log: origin.log, event: origin.event });
    else this.origins.delete(projection);
  }

  /** How many writes `projection` was given since this store was made: only grows (a snapshot compares two readings). */
  writesTo(projection: string): number {
    return this.writeCounts.get(projection) ?? 0;
  }

  async getCheckpoint(projection: string): Promise<bigint | undefined> {
    keyPrefix(projection);
    return this.checkpoints.get(projection);
  }

  async getCheckpoints(projections: readonly string[]): Promise<Array<bigint | undefined>> {
    return projections.map((p) => (keyPrefix(p), this.checkpoints.get(p)));
  }

  async getStamps(projections: readonly string[]): Promise<Array<Stamp | undefined>> {
    return projections.map((p) => {
      const checkpoint = this.checkpoints.get(p);
      const origin = this.origins.get(p);
      return checkpoint === undefined ? undefined : { checkpoint, ...(origin ? { origin: { ...origin } } : {}) };
    });
  }

  watchReconnects(): () => void {
    return () => undefined;
  }

  async drop(projection: string): Promise<void> {
    this.forget(projection);
  }

  private forget(projection: string): void {
    const prefix = keyPrefix(projection);
    for (const c of this.captures.get(projection) ?? []) c.void();
    this.hashes.dropPrefix(prefix);
    this.zsets.dropPrefix(prefix);
    this.checkpoints.delete(projection);
    this.origins.delete(projection);
    this.servingNames.delete(projection);
  }

  async markServing(projection: string, checkpoint: bigint | null): Promise<boolean> {
    keyPrefix(projection);
    if ((this.checkpoints.get(projection) ?? null) !== checkpoint) return false;
    this.servingNames.add(projection);
    return true;
  }

  async unmarkServing(projection: string): Promise<void> {
    keyPrefix(projection);
    this.servingNames.delete(projection);
  }

  guarded(): ReadStore {
    const view = Object.create(this) as this;
    view.guardReads = true;
    return view;
  }

  async serving(projections: readonly string[]): Promise<boolean[]> {
    return projections.map((p) => this.servingNames.has(p));
  }

  /** With guardReads: refuses reads of a projection not marked serving. */
  private guard(keys: readonly string[]): void {
    if (!this.guardReads) return;
    const missing = projectionsOfKeys(keys).filter((p) => !this.servingNames.has(p));
    if (missing.length) throw new ReadStoreUnavailableError(missing, `${missing.join(", ")} not serving`);
  }

  /** Forgets everything, as a Redis FLUSHALL would (tests of the projector's self-healing). */
  flushAll(): void {
    for (const open of this.captures.values()) for (const c of open) c.void();
    this.hashes.clear();
    this.zsets.clear();
    this.checkpoints.clear();
    this.origins.clear();
    this.servingNames.clear();
  }

  async getDocs(keys: readonly string[]): Promise<Array<Doc | null>> {
    this.guard(keys);
    return keys.map((k) => {
      const h = this.hash(k);
      if (!h) return null;
      const doc: Doc = {};
      for (const [f, field] of h) doc[f] = decoded(field);
      return doc;
    });
  }

  async getMembers(keys: readonly string[]): Promise<string[][]> {
    this.guard(keys);
    return keys.map((k) => {
      const z = this.zset(k);
      return z ? Array.from(z.entriesAfter(), ([m]) => m) : [];
    });
  }

  async count(keys: readonly string[]): Promise<number[]> {
    this.guard(keys);
    return keys.map((k) => this.zset(k)?.size ?? 0);
  }

  async range(keys: readonly string[], options: RangeOptions): Promise<RangePage> {
    if (keys.length === 0) throw new RangeError("range needs at least one key");
    this.guard(keys);
    const after = options.after === undefined ? undefined : decodeCursor(options.after);
    const limit = Math.max(0, options.limit);
    const sets = keys.map((k) => this.zset(k));
    if (sets.some((s) => s === undefined)) return { items: [], total: 0, hasMore: false };
    const [first, ...rest] = sets as SortedSet[];
    let entries: Iterable<[string, number]>;
    let total: number;
    const until = options.until ?? Infinity;
    if (rest.length === 0) {
      entries = first!.entriesAfter(after);
      total = until === Infinity ? first!.size : first!.countUpTo(until);
    } else {
      const smallest = [first!, ...rest].reduce((a, b) => (b.size < a.size ? b : a));
      const all: Array<[string, number]> = [];
      for (const [m] of smallest.entriesAfter()) {
        if (rest.every((s) => s.has(m)) && first!.has(m) && first!.score(m)! <= until) all.push([m, first!.score(m)!]);
      }
      all.sort((a, b) => compareEntries(a[1], a[0], b[1], b[0]));
      total = all.length;
      entries = after ? all.filter(([m, s]) => compareEntries(s, m, after.score, after.member) > 0) : all;
    }
    const items: RangePage["items"] = [];
    let hasMore = false;
    for (const [member, score] of entries) {
      if (score > until) break;
      if (items.length === limit) {
        hasMore = true;
        break;
      }
      items.push({ member, score, cursor: encodeCursor(score, member) });
    }
    return { items, total, hasMore };
  }

  async dump(projection: string): Promise<StoreDump> {
    const prefix = keyPrefix(projection);
    const keys: StoreDump["keys"] = {};
    const names = [...this.hashes.withPrefix(prefix).keys(), ...this.zsets.withPrefix(prefix).keys()].sort();
    for (const k of names) {
      const h = this.hash(k);
      if (h) {
        const hash: Record<string, unknown> = {};
        for (const f of [...h.keys()].sort()) hash[f] = JSON.parse(h.get(f)!.json);
        keys[k] = { hash };
      } else {
        keys[k] = { zset: Array.from(this.zset(k)!.entriesAfter()) };
      }
    }
    const cp = this.checkpoints.get(projection);
    return { checkpoint: cp === undefined ? null : cp.toString(), keys };
  }

  async close(): Promise<void> {}

  /**
   * The projection as it is now, to be read while the store goes on (memory-capture.ts: copy on
   * write); undefined without a checkpoint. Read its `lines()` to the end (or leave them) to close it.
   */
  openCapture(projection: string): ModelCapture | undefined {
    const prefix = keyPrefix(projection);
    const checkpoint = this.checkpoints.get(projection);
    if (checkpoint === undefined) return undefined;
    const origin = this.origins.get(projection);
    const source = {
      hashKeys: this.hashes.withPrefix(prefix),
      zsetKeys: this.zsets.withPrefix(prefix),
      hashContent: (key: string): HashContent => {
        const h = this.hashes.get(key);
        return h instanceof Map ? Array.from(h, ([f, field]) => [f, field.json]) : h;
      },
      zsetContent: (key: string): ZsetContent => {
        const z = this.zsets.get(key);
        return z instanceof SortedSet ? Array.from(z.entriesAfter()) : z;
      },
    };
    const open = this.captures.get(projection) ?? new Set<ModelCapture>();
    this.captures.set(projection, open);
    const capture = new ModelCapture(checkpoint, origin && { ...origin }, source, () => {
      open.delete(capture);
      if (open.size === 0 && this.captures.get(projection) === open) this.captures.delete(projection);
    });
    open.add(capture);
    return capture;
  }

  /** Before `w` is applied: what the keys it changes hold now, for a capture being read. */
  private saving(c: ModelCapture, w: Write): void {
    switch (w.op) {
      case "put":
      case "unset":
        return c.savingHash(w.key);
      case "del":
        c.savingHash(w.key);
        return c.savingZset(w.key);
      case "zadd":
      case "zrem":
        return c.savingZset(w.key);
      case "index": {
        c.savingHash(w.index);
        const oldField = this.hash(w.index)?.get(w.member);
        if (oldField !== undefined) c.savingZset(`${w.index}:${decoded(oldField) as string}`);
        if (w.value !== null) c.savingZset(`${w.index}:${w.value}`);
        return;
      }
    }
  }

  /** Puts back a captured projection in place of what the store holds of it (not marked serving: the projector marks it once caught up). */
  restore(projection: string, model: CapturedModel): void {
    const prefix = keyPrefix(projection);
    for (const list of [model.hashes, model.zsets]) {
      for (const [k] of list) if (!k.startsWith(prefix)) throw new RangeError(`key ${k} is not of projection ${projection}`);
    }
    this.forget(projection);
    for (const [k, fields] of model.hashes) this.hashes.set(k, Array.isArray(fields) ? toHash(fields) : fields);
    for (const [k, entries] of model.zsets) {
      if (!Array.isArray(entries)) {
        if (entries.end - entries.start > 2) this.zsets.set(k, entries); // "[]": an empty set is none
      } else if (entries.length > 0) this.zsets.set(k, SortedSet.of(entries));
    }
    this.checkpoints.set(projection, model.checkpoint);
    if (model.origin) this.origins.set(projection, { ...model.origin });
  }

  private apply(w: Write, fields?: Array<[string, string]>): void {
    switch (w.op) {
      case "put": {
        if (fields!.length === 0) return;
        let h = this.hash(w.key);
        if (!h) this.hashes.set(w.key, (h = new Map()));
        for (const [f, json] of fields!) h.set(f, { json });
        return;
      }
      case "unset": {
        const h = this.hash(w.key);
        if (!h) return;
        for (const f of w.fields) h.delete(f);
        if (h.size === 0) this.hashes.delete(w.key);
        return;
      }
      case "del":
        this.hashes.delete(w.key);
        this.zsets.delete(w.key);
        return;
      case "zadd":
        this.zadd(w.key, w.member, w.score, w.nx);
        return;
      case "zrem":
        this.zrem(w.key, w.member);
        return;
      case "index": {
        const rev = this.hash(w.index);
        const oldField = rev?.get(w.member);
        const old = oldField === undefined ? null : (decoded(oldField) as string);
        if (old === w.value) return;
        if (old !== null) this.zrem(`${w.index}:${old}`, w.member);
        if (w.value === null) {
          rev!.delete(w.member);
          if (rev!.size === 0) this.hashes.delete(w.index);
          return;
        }
        this.zadd(`${w.index}:${w.value}`, w.member, this.zset(w.order)?.score(w.member) ?? 0, false);
        const field = { json: JSON.stringify(w.value), value: w.value };
        if (rev) rev.set(w.member, field);
        else this.hashes.set(w.index, new Map([[w.member, field]]));
        return;
      }
    }
  }

  /** The hash at `key`, parsed now if it is still a snapshot's text. */
  private hash(key: string): Hash | undefined {
    const h = this.hashes.get(key);
    if (h === undefined || h instanceof Map) return h;
    const parsed = toHash(JSON.parse(rawText(h)) as Array<[string, string]>);
    this.hashes.set(key, parsed);
    return parsed;
  }

  /** The sorted set at `key`, built now if it is still a snapshot's text (an empty one is none). */
  private zset(key: string): SortedSet | undefined {
    const z = this.zsets.get(key);
    if (z === undefined || z instanceof SortedSet) return z;
    const entries = JSON.parse(rawText(z)) as Array<[string, number]>;
    if (entries.length === 0) {
      this.zsets.delete(key);
      return undefined;
    }
    const built = SortedSet.of(entries);
    this.zsets.set(key, built);
    return built;
  }

  private zadd(key: string, member: string, score: number, nx = false): void {
    let z = this.zset(key);
    if (!z) this.zsets.set(key, (z = new SortedSet()));
    // Redis stores -0 as 0.
    z.add(member, score === 0 ? 0 : score, nx);
  }

  private zrem(key: string, member: string): void {
    const z = this.zset(key);
    if (!z) return;
    z.remove(member);
    if (z.size === 0) this.zsets.delete(key);
  }
}

function decoded(field: Field): unknown {
  if (!("value" in field)) field.value = deepFreeze(JSON.parse(field.json));
  return field.value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function toHash(fields: ReadonlyArray<[field: string, json: string]>): Hash {
  return new Map(fields.map(([f, json]) => [f, { json }]));
}

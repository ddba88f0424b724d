import { CheckpointMismatchError, ReadStoreUnavailableError } from "./port.js";
import { otherLog, stillOrBack, decodeCursor, encodeCursor, encodeFields, keyPrefix, projectionsOfKeys, validateBatch, compareEntries } from "./keys-and-cursors.js";
import type { Doc, Origin, RangeOptions, RangePage, ReadStore, Stamp, StoreDump, Write } from "./port.js";
import { SortedSet } from "./sorted-set.js";
import { FieldsAtCapture, LARGE_HASH, ModelCapture, rawText, type HashContent, type RawJson, type ZsetContent } from "./memory-capture.js";
import { PartitionedMap } from "./partitioned-map.js";
import { docOf, FIELD_MAP_FROM, fieldMapOf, frozenValue, keptHash, textOf, type FieldMap, type HashValue } from "./hash-text.js";
import type { Pacing } from "../duty-cycle.js";
import { RecentKeys } from "./recent-keys.js";
import { flat } from "./flat-text.js";

export { rawText, type RawJson } from "./memory-capture.js";

/**
 * Everything one projection holds, with its checkpoint, as one moment of the store (a snapshot's
 * content: memory-snapshots.ts). Fields stay JSON-encoded, as stored.
 */
export interface CapturedModel {
  checkpoint: bigint;
  origin?: Origin;
  /** A hash as the JSON object of its fields (`{"field":value,...}`), or that text in a snapshot's bytes, not read yet. */
  hashes: Array<[key: string, fields: string | RawJson]>;
  /** A sorted set's entries in Redis order, or (from and back to a snapshot) the JSON text of that array, not parsed yet. */
  zsets: Array<[key: string, entries: Array<[member: string, score: number]> | string | RawJson]>;
}

/**
 * The read store of the embedded mode (and of tests): Redis semantics in process memory. Values
 * are JSON-encoded on write, as in Redis, so both adapters return equal values. A hash, and a
 * small sorted set, is kept as its JSON text (hash-text.ts) and parsed at each read, so a fleet's
 * models are a few objects per key on the heap, not one per field, value and member: the garbage
 * collector's marking, which pauses the service, follows the number of objects. The keys written
 * lately (RECENT_KEYS of each kind) are kept in the form quick to change (a map of fields, a
 * SortedSet) until newer writes push them out (recent-keys.ts): a key written several times in a
 * row is parsed once. A batch is validated, then applied without an await: atomic.
 */
export class MemoryReadStore implements ReadStore {
  readonly kind = "memory" as const;
  /**
   * A hash: its JSON text, or a map of fields while written lately or when large. One loaded from a
   * snapshot stays in the snapshot's bytes until first used or taken out in the background
   * (`settleLoaded`): a restart reads only the keys.
   */
  private readonly hashes = new PartitionedMap<HashValue | RawJson>();
  /**
   * A sorted set of up to `SMALL_SET` members is kept as its JSON text (`[[member, score], ...]`)
   * and built when used, for the same reason as hashes (most sets are an object's few children);
   * a larger one as a SortedSet. One loaded from a snapshot stays its text in the snapshot's bytes until used, as hashes do.
   */
  private readonly zsets = new PartitionedMap<SortedSet | string | RawJson>();
  /** The keys written lately, kept in the form quick to change (memory: RECENT_KEYS of each kind). */
  private readonly recentHashes = new RecentKeys(RECENT_KEYS, (key) => this.settleHash(key));
  private readonly recentZsets = new RecentKeys(RECENT_KEYS, (key) => this.settleZset(key));
  /** Keys loaded from a snapshot whose content is LARGE_LOADED bytes or more: `settleLoaded` takes them out first. */
  private loadedLarge: Array<["h" | "z", string]> = [];
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
      return h === undefined ? null : docOf(h);
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
        const doc = docOf(h);
        keys[k] = { hash: Object.fromEntries(Object.keys(doc).sort().map((f) => [f, doc[f]])) };
      } else {
        keys[k] = { zset: this.zset(k)!.entries() };
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
        if (h === undefined || isRaw(h) || typeof h === "string") return h;
        return h.size > LARGE_HASH ? new FieldsAtCapture(h) : textOf(h);
      },
      zsetContent: (key: string): ZsetContent => {
        const z = this.zsets.get(key);
        return z instanceof SortedSet ? z.entries() : z;
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
        return this.savingHash(c, w.key, Object.keys(w.fields));
      case "unset":
        return this.savingHash(c, w.key, w.fields);
      case "del":
        c.savingHash(w.key);
        return c.savingZset(w.key);
      case "zadd":
      case "zrem":
        return c.savingZset(w.key);
      case "index": {
        this.savingHash(c, w.index, [w.member]);
        const old = this.indexed(w.index, w.member);
        if (old !== null) c.savingZset(`${w.index}:${old}`);
        if (w.value !== null) c.savingZset(`${w.index}:${w.value}`);
        return;
      }
    }
  }

  /** Before `fields` of the hash at `key` change: a large one keeps only those fields for the capture, any other its whole content. */
  private savingHash(c: ModelCapture, key: string, fields: Iterable<string>): void {
    const h = this.hashes.get(key);
    if (h instanceof Map && h.size > LARGE_HASH) c.savingFields(key, h, fields);
    else c.savingHash(key);
  }

  /** Puts back a captured projection in place of what the store holds of it (not marked serving: the projector marks it once caught up). */
  restore(projection: string, model: CapturedModel): void {
    const prefix = keyPrefix(projection);
    for (const list of [model.hashes, model.zsets]) {
      for (const [k] of list) if (!k.startsWith(prefix)) throw new RangeError(`key ${k} is not of projection ${projection}`);
    }
    this.forget(projection);
    for (const [k, fields] of model.hashes) {
      const size = typeof fields === "string" ? fields.length : fields.end - fields.start;
      if (size <= 2) continue; // "{}": an empty hash is none
      this.hashes.set(k, fields);
      if (size >= LARGE_LOADED) this.loadedLarge.push(["h", k]);
    }
    for (const [k, entries] of model.zsets) {
      if (!Array.isArray(entries)) {
        const size = typeof entries === "string" ? entries.length : entries.end - entries.start;
        if (size <= 2) continue; // "[]": an empty set is none
        this.zsets.set(k, entries);
        if (size >= LARGE_LOADED) this.loadedLarge.push(["z", k]);
      } else if (entries.length > SMALL_SET) this.zsets.set(k, SortedSet.of(entries));
      else if (entries.length > 0) this.zsets.set(k, setText(SortedSet.of(entries)));
    }
    this.checkpoints.set(projection, model.checkpoint);
    if (model.origin) this.origins.set(projection, { ...model.origin });
  }

  /**
   * Takes every key still in a loaded snapshot's bytes out of them (as its first use would), a
   * slice of keys at a time between `pace`'s pauses, so that the snapshots' buffers are freed: until
   * the last key of a file leaves its bytes, the whole file stays in memory beside the keys taken
   * out, and the service's memory grows with what the fleet happens to use. Ends early once
   * `stopped()`; the number of keys taken out.
   */
  async settleLoaded(pace: Pacing, stopped: () => boolean = () => false): Promise<number> {
    let settled = 0;
    // The large keys first, each with a pause after it: each is a parse of up to megabytes, which
    // a write on the path of a request (a bind, a report) would otherwise wait for.
    for (const [kind, key] of this.loadedLarge.splice(0)) {
      if (!this.takeOut(kind, key)) continue;
      settled++;
      await pace.pause();
      if (stopped()) return settled;
    }
    let since = performance.now();
    for (const kind of ["h", "z"] as const) {
      for (const part of (kind === "h" ? this.hashes : this.zsets).partitions()) {
        for (const key of part.keys()) {
          if (!this.takeOut(kind, key)) continue;
          settled++;
          if (settled % SETTLE_CHECK_EVERY !== 0 || performance.now() - since < SETTLE_SLICE_MS) continue;
          await pace.pause();
          if (stopped()) return settled;
          since = performance.now();
        }
      }
    }
    return settled;
  }

  /** Takes the hash (`h`) or sorted set (`z`) at `key` out of a snapshot's bytes, as its first use would; whether it was still there. */
  private takeOut(kind: "h" | "z", key: string): boolean {
    if (!isRaw((kind === "h" ? this.hashes : this.zsets).get(key))) return false;
    if (kind === "h") this.hash(key);
    else this.zset(key);
    return true;
  }

  private apply(w: Write, fields?: Array<[string, string]>): void {
    switch (w.op) {
      case "put": {
        if (fields!.length === 0) return;
        const h = this.changingHash(w.key, true)!;
        for (const [f, json] of fields!) h.set(f, frozenValue(json));
        return;
      }
      case "unset": {
        const h = this.changingHash(w.key, false);
        if (h === undefined) return;
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
        const old = this.indexed(w.index, w.member);
        if (old === w.value) return;
        if (old !== null) this.zrem(`${w.index}:${old}`, w.member);
        const rev = this.changingHash(w.index, w.value !== null)!;
        if (w.value === null) {
          rev.delete(w.member);
          if (rev.size === 0) this.hashes.delete(w.index);
          return;
        }
        this.zadd(`${w.index}:${w.value}`, w.member, this.zset(w.order)?.score(w.member) ?? 0, false);
        rev.set(w.member, w.value);
        return;
      }
    }
  }

  /**
   * The hash at `key` as a map of fields, to be changed (a new one when `create`), kept in that
   * form while it is among the keys written lately (`recent`).
   */
  private changingHash(key: string, create: boolean): FieldMap | undefined {
    const h = this.hash(key);
    if (h instanceof Map) return h;
    if (h === undefined && !create) return undefined;
    const fields: FieldMap = h === undefined ? new Map() : fieldMapOf(h);
    this.hashes.set(key, fields);
    this.recentHashes.add(key);
    return fields;
  }

  /** A hash no longer among those written lately: kept as its text again, unless it is large. */
  private settleHash(key: string): void {
    const h = this.hashes.get(key);
    if (h instanceof Map && h.size <= FIELD_MAP_FROM) this.hashes.set(key, flat(textOf(h)));
  }

  /** The hash at `key`, its text taken out of the snapshot's bytes now if it was still there. */
  private hash(key: string): HashValue | undefined {
    const h = this.hashes.get(key);
    if (h === undefined || !isRaw(h)) return h;
    const kept = keptHash(rawText(h));
    this.hashes.set(key, kept);
    return kept;
  }

  /** The value an index holds for `member` (its reverse hash's field), or null. */
  private indexed(index: string, member: string): string | null {
    const h = this.hash(index);
    if (h === undefined) return null;
    if (h instanceof Map) return (h.get(member) as string | undefined) ?? null;
    const doc = docOf(h);
    return Object.hasOwn(doc, member) ? (doc[member] as string) : null;
  }

  /**
   * The sorted set at `key` (an empty one is none): built from its text for this read if it is
   * small, kept built if it is large or being changed (`changing`: among the keys written lately).
   */
  private zset(key: string, changing = false): SortedSet | undefined {
    const z = this.zsets.get(key);
    if (z === undefined || z instanceof SortedSet) return z;
    const text = typeof z === "string" ? z : rawText(z);
    const entries = JSON.parse(text) as Array<[string, number]>;
    if (entries.length === 0) {
      this.zsets.delete(key);
      return undefined;
    }
    const built = SortedSet.of(entries);
    if (changing || built.size > SMALL_SET) this.zsets.set(key, built);
    else if (typeof z !== "string") this.zsets.set(key, text);
    if (changing) this.recentZsets.add(key);
    return built;
  }

  /** A sorted set no longer among those written lately: kept as its text again, unless it is large. */
  private settleZset(key: string): void {
    const z = this.zsets.get(key);
    if (z instanceof SortedSet && z.size <= SMALL_SET) this.zsets.set(key, setText(z));
  }

  private zadd(key: string, member: string, score: number, nx = false): void {
    let z = this.zset(key, true);
    if (!z) {
      this.zsets.set(key, (z = new SortedSet()));
      this.recentZsets.add(key);
    }
    // Redis stores -0 as 0.
    z.add(member, score === 0 ? 0 : score, nx);
  }

  private zrem(key: string, member: string): void {
    const z = this.zset(key, true);
    if (!z) return;
    z.remove(member);
    if (z.size === 0) this.zsets.delete(key);
  }
}

/** Sorted sets of up to this many members are kept as their text (once not among the keys written lately). */
const SMALL_SET = 32;
/** How many hashes, and how many sorted sets, written lately are kept in their quick-to-change form. */
const RECENT_KEYS = 4096;

/** A small set's text as the store keeps it: `[[member, score], ...]`, flat. */
function setText(z: SortedSet): string {
  return flat(JSON.stringify(z.entries()));
}

/** A key's content in a snapshot this long or longer (an index over every device: megabytes) is taken out of the bytes first. */
const LARGE_LOADED = 16 * 1024;
/** Keys taken out of a snapshot's bytes between two looks at the clock, and how long a slice of them runs before a pause. */
const SETTLE_CHECK_EVERY = 64;
const SETTLE_SLICE_MS = 2;

function isRaw(h: unknown): h is RawJson {
  return typeof h === "object" && h !== null && !(h instanceof Map) && !(h instanceof SortedSet);
}

/**
 * The ReadStore port: where projections keep their read models. Adapters: memory (embedded mode,
 * tests) and redis (production). Both pass test/readstore/contract.ts.
 *
 * Data model (a small subset of Redis, so the Redis adapter maps 1:1 and stays fast):
 * - a doc is a hash: field -> JSON value (each field is encoded on its own, so a projection can
 *   change some fields without knowing the others; nested values keep their key order);
 * - an ordered index is a sorted set of members with a numeric score (projections use the log
 *   position of the creating event, so lists come out in creation order); ties are ordered by
 *   member (binary order, as Redis);
 * - an index family is a secondary index the store maintains for a projection that does not know
 *   the old value (delete events rarely carry every field): see the `index` write.
 *
 * Every key of a projection starts with `{<projection name>}:`. The braces are a Redis hash tag:
 * on Redis Cluster all keys of one projection live in one slot, so one script can apply a batch.
 * A key holds one kind (doc or ordered index) for its whole life: writing both to one key is a
 * projection bug (Redis answers WRONGTYPE in the middle of a batch).
 * `{<name>}:@meta` is reserved for the checkpoint (it is also the marker that the store still
 * holds the projection: when it is missing, the store lost its data or never had it) and for the
 * `serving` mark: the projector sets it once the model is complete, and only then may readers use
 * it (a model being rebuilt, or lost and not yet noticed, is never read as if it were empty).
 */

/** A doc as read back: field -> decoded JSON value. */
export type Doc = Record<string, unknown>;

export type Write =
  /** Sets fields of a doc (HSET): JSON-encoded one by one; `undefined` fields are skipped. */
  | { op: "put"; key: string; fields: Readonly<Record<string, unknown>> }
  /** Removes fields of a doc (HDEL). A doc with no field left no longer exists. */
  | { op: "unset"; key: string; fields: readonly string[] }
  /** Deletes a key of any kind. */
  | { op: "del"; key: string }
  /** Adds a member to an ordered index, or moves it to `score`; with `nx`, an existing member keeps its score. */
  | { op: "zadd"; key: string; member: string; score: number; nx?: boolean }
  | { op: "zrem"; key: string; member: string }
  /**
   * Files `member` under `value` in the index family `index`: it leaves `${index}:${old}` (the
   * value it was filed under, which the store remembers in the doc `index`, field member -> value)
   * and joins `${index}:${value}` with the score it has in the ordered index `order` (0 if none).
   * `value: null` takes it out of the family. Families are written only through this op.
   */
  | { op: "index"; index: string; member: string; value: string | null; order: string };

export interface RangeOptions {
  /** A cursor returned by a previous range over the same projection: items strictly after it. */
  after?: string;
  limit: number;
  /**
   * Only members scored at most this (inclusive): items, total and hasMore count no others. An
   * index scored by log position, cut at a position, is the index as it was then (if nothing
   * was removed from it since).
   */
  until?: number;
}

export interface RangeItem {
  member: string;
  score: number;
  cursor: string;
}

export interface RangePage {
  items: RangeItem[];
  /** Members of the whole range (the intersection), not only this page. */
  total: number;
  hasMore: boolean;
}

/** Everything a projection holds, in a canonical form (sorted keys): tests compare dumps. */
export interface StoreDump {
  checkpoint: string | null;
  keys: Record<string, { hash: Record<string, unknown> } | { zset: Array<[string, number]> }>;
}

/**
 * Which log a model was built from, kept with its checkpoint: a store that outlives the process
 * (Redis, LMDB) may meet another log (a fresh one, one restored from a backup, another deployment's).
 */
export interface Origin {
  /** The log's identity: the id of its first event. */
  log: string;
  /** The id of the log's event at the checkpoint. */
  event: string;
}

/** A projection's checkpoint and the origin written with it (none: written without one). */
export interface Stamp {
  checkpoint: bigint;
  origin?: Origin;
}

export interface ReadStore {
  readonly kind: "memory" | "redis" | "lmdb" | "split";

  /**
   * Applies the writes, in order, and sets the projection's checkpoint, as one atomic step.
   * `expected` guards against a store that changed under the projector: `undefined` skips the check,
   * `null` requires that the projection has no checkpoint, a position requires exactly that one.
   * Throws CheckpointMismatchError (and writes nothing) when the guard fails or when `checkpoint`
   * is not after the stored one, so replaying an applied event can never apply it twice.
   * `origin` is stored with the checkpoint (without one, the stored origin is removed: it would
   * name another event), and a model stamped with another log (`origin.log`) refuses the batch
   * with CheckpointMismatchError, as a failed guard does.
   */
  applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<void>;
  /** The projection's checkpoint, or undefined when it has none (never written, dropped, or lost). */
  getCheckpoint(projection: string): Promise<bigint | undefined>;
  /** Several checkpoints in one round trip. */
  getCheckpoints(projections: readonly string[]): Promise<Array<bigint | undefined>>;
  /** Several checkpoints with their origins, in one round trip; undefined where there is no checkpoint. */
  getStamps(projections: readonly string[]): Promise<Array<Stamp | undefined>>;
  /**
   * Calls `listener` each time the store is reached again after losing its connection (Redis): it
   * may now be another store. Returns the way to stop. Stores in the process never call it.
   */
  watchReconnects(listener: () => void): () => void;
  /** Deletes every key of the projection, its checkpoint and serving mark included. */
  drop(projection: string): Promise<void>;

  /**
   * Marks the projection's model complete for readers, if the store holds it at `checkpoint` (null:
   * no checkpoint yet, an empty log): a store that lost the model since is not marked. Returns
   * whether it marked it.
   */
  markServing(projection: string, checkpoint: bigint | null): Promise<boolean>;
  /** Takes the mark away: readers get ReadStoreUnavailableError until it is set again. */
  unmarkServing(projection: string): Promise<void>;
  /** Whether each projection is marked serving, in one round trip. */
  serving(projections: readonly string[]): Promise<boolean[]>;
  /**
   * The same store (same data, same connection), whose getDocs, getMembers, count and range refuse
   * a projection not marked serving with ReadStoreUnavailableError, checked in the same round trip
   * as the read, and refuse at once while the store cannot be reached. The API reads through it;
   * the projector and its hooks read the store itself.
   */
  guarded(): ReadStore;

  /**
   * Docs by key, in one round trip; null where there is no doc. A doc read is the caller's to
   * keep, but its values may be shared and frozen (memory): never change them.
   */
  getDocs(keys: readonly string[]): Promise<Array<Doc | null>>;
  /** All members of ordered indexes, in order, in one round trip (for small per-parent indexes). */
  getMembers(keys: readonly string[]): Promise<string[][]>;
  /** Sizes of ordered indexes, in one round trip. */
  count(keys: readonly string[]): Promise<number[]>;
  /**
   * A page of the intersection of ordered indexes (one key: that index), in (score, member)
   * order, in one round trip. With several keys, scores come from the first key.
   */
  range(keys: readonly string[], options: RangeOptions): Promise<RangePage>;

  dump(projection: string): Promise<StoreDump>;
  close(): Promise<void>;
}

/**
 * The read store cannot answer truthfully now: a model is not marked serving (lost, being rebuilt,
 * never built) or the store cannot be reached. The API answers UNAVAILABLE (HTTP 503) with
 * Retry-After; the projector rebuilds what was lost.
 */
export class ReadStoreUnavailableError extends Error {
  constructor(
    readonly projections: readonly string[],
    reason: string,
  ) {
    super(`the read models are unavailable (${reason}); try again shortly`);
    this.name = "ReadStoreUnavailableError";
  }
}

/** The projection a key belongs to (`{name}:...`). */
export function projectionOfKey(key: string): string {
  const end = key.indexOf("}:");
  if (key[0] !== "{" || end < 2) throw new RangeError(`not a projection key: ${JSON.stringify(key)}`);
  return key.slice(1, end);
}

/** The distinct projections of some keys (usually one). */
export function projectionsOfKeys(keys: readonly string[]): string[] {
  const out: string[] = [];
  let last: string | undefined;
  for (const k of keys) {
    if (last !== undefined && k.startsWith(last, 1) && k.charCodeAt(last.length + 1) === 125 /* } */) continue;
    last = projectionOfKey(k);
    if (!out.includes(last)) out.push(last);
  }
  return out;
}

/** The stored checkpoint is not the one the writer expected: the store changed under it. */
export class CheckpointMismatchError extends Error {
  constructor(
    readonly projection: string,
    readonly expected: bigint | null | undefined,
    readonly actual: bigint | undefined,
    readonly attempted: bigint,
  ) {
    super(
      `read store: projection ${projection} is at ${actual ?? "none"}, ` +
        `the writer expected ${expected === undefined ? "any" : (expected ?? "none")} and tried to move it to ${attempted}`,
    );
    this.name = "CheckpointMismatchError";
  }
}

/** A model stamped with another log than the batch's refuses it (applyBatch). */
export const otherLog = (stored: string | undefined | null, origin: Origin | undefined): boolean => origin !== undefined && stored != null && stored !== origin.log;

const NAME_RE = /^[a-z][a-z0-9-]{0,63}$/;

export function keyPrefix(projection: string): string {
  if (!NAME_RE.test(projection)) throw new RangeError(`bad projection name: ${JSON.stringify(projection)}`);
  return `{${projection}}:`;
}

export const metaKey = (projection: string): string => `${keyPrefix(projection)}@meta`;

/** 20 digits hold every unsigned 64-bit position; equal widths make string order numeric order. */
export function padPosition(p: bigint): string {
  if (p < 0n || p > 18446744073709551615n) throw new RangeError(`position out of range: ${p}`);
  return p.toString(10).padStart(20, "0");
}

/** Checks everything a batch could fail on before the first write, so adapters never half-apply. */
export function validateBatch(projection: string, writes: readonly Write[], checkpoint: bigint): void {
  const prefix = keyPrefix(projection);
  const meta = metaKey(projection);
  padPosition(checkpoint);
  const own = (key: unknown) => {
    if (typeof key !== "string" || !key.startsWith(prefix) || key === meta || key.length === prefix.length) {
      throw new RangeError(`projection ${projection} cannot write key ${JSON.stringify(key)}`);
    }
  };
  for (const w of writes) {
    switch (w.op) {
      case "put":
        own(w.key);
        break;
      case "unset":
      case "del":
        own(w.key);
        break;
      case "zadd":
        own(w.key);
        if (typeof w.member !== "string") throw new TypeError(`zadd ${w.key}: member must be a string`);
        if (!Number.isFinite(w.score)) throw new RangeError(`zadd ${w.key}: score must be finite`);
        break;
      case "zrem":
        own(w.key);
        break;
      case "index":
        own(w.index);
        own(w.order);
        if (w.value !== null && typeof w.value !== "string") throw new TypeError(`index ${w.index}: value must be a string or null`);
        break;
      default: {
        const never: never = w;
        throw new TypeError(`unknown write ${JSON.stringify(never)}`);
      }
    }
  }
}

/** The fields of a put, JSON-encoded; `undefined` fields are skipped. Throws on a non-JSON value. */
export function encodeFields(key: string, fields: Readonly<Record<string, unknown>>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const f in fields) {
    const v = fields[f];
    if (v === undefined) continue;
    const json = JSON.stringify(v);
    if (json === undefined) throw new TypeError(`field ${f} of ${key} is not JSON`);
    out.push([f, json]);
  }
  return out;
}

/** Cursors are opaque to clients: base64url of "<score>:<member>". */
export function encodeCursor(score: number, member: string): string {
  return Buffer.from(`${String(score)}:${member}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): { score: number; member: string } {
  const raw = Buffer.from(cursor, "base64url").toString("utf8");
  const i = raw.indexOf(":");
  const score = i > 0 ? Number(raw.slice(0, i)) : Number.NaN;
  if (!Number.isFinite(score)) throw new CursorError(cursor);
  return { score, member: raw.slice(i + 1) };
}

export class CursorError extends Error {
  readonly code = "BAD_USER_INPUT";
  constructor(cursor: string) {
    super(`not a cursor: ${JSON.stringify(cursor)}`);
    this.name = "CursorError";
  }
}

/**
 * (score, member) order, as Redis sorts a sorted set. Members compare by UTF-16 code units, which
 * is Redis's byte order for every member without characters above U+D7FF (ids, names, hosts).
 */
export function compareEntries(sa: number, ma: string, sb: number, mb: string): number {
  if (sa !== sb) return sa < sb ? -1 : 1;
  return ma === mb ? 0 : ma < mb ? -1 : 1;
}

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
 * The key prefixes, batch checks and cursors every adapter shares: keys-and-cursors.ts.
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
   * is not after the stored one, so replaying an applied event can never apply it twice; a batch
   * may stay at the stored checkpoint only when `expected` names it (writes no event brings:
   * retention's retractions on an idle log).
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
   * keep, but its values may be shared and frozen (a store may cache them): never change them.
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

/** A cursor no range returned (RangeOptions.after). */
export class CursorError extends Error {
  readonly code = "BAD_USER_INPUT";
  constructor(cursor: string) {
    super(`not a cursor: ${JSON.stringify(cursor)}`);
    this.name = "CursorError";
  }
}

/**
 * The EventStore port. Every adapter (memory, lmdb, esdb) passes test/eventstore/contract.ts.
 *
 * Revisions are 0-based per stream (the revision of a stream is the revision of its last event).
 * Positions are global, strictly increasing in commit order, and opaque beyond ordering: adapters
 * may leave gaps. Inside the process they are bigint; at every boundary (GraphQL, Redis, logs)
 * they travel as decimal strings (see positionToString / positionFromString).
 */
import type { ChainCheckpoint } from "./chain.js";

export type { ChainCheckpoint };

export type ExpectedRevision = "no_stream" | "stream_exists" | "any" | number;

export interface EventMetadata {
  /** Who acted: a token's subject, "agent:<host>", or "system:<component>". */
  principal: string;
  /** One id for everything that one request caused. */
  correlationId: string;
  /** The id of the event or request that directly caused this one. */
  causationId: string;
  /** ISO-8601 time the command was issued. */
  at: string;
  [key: string]: unknown;
}

export interface NewEvent<T extends string = string, D = unknown> {
  id: string;
  type: T;
  data: D;
  metadata: EventMetadata;
  /** The hash chain version to hash it with (chain.ts); default the current one. An import passes an exported event's. */
  chainVersion?: number;
}

export interface RecordedEvent<T extends string = string, D = unknown> {
  id: string;
  stream: string;
  revision: number;
  position: bigint;
  type: T;
  data: D;
  metadata: EventMetadata;
  recordedAt: Date;
  /**
   * The event's link in its stream's hash chain (hex SHA-256, see chain.ts), written in the same
   * commit as the event. Absent on events written before the chain existed.
   */
  hash?: string;
  /** The definition `hash` follows (chain.ts): 2, or absent for version 1. */
  chainVersion?: number;
}

/** A recorded event of a union of domain events, narrowed by `type` (a switch on `event.type` types `event.data`). */
export type Recorded<E extends { type: string; data: unknown }> = E extends unknown ? RecordedEvent<E["type"], E["data"]> : never;

export interface AppendResult {
  /** The stream's revision after the append. */
  revision: number;
  /** Position of the last event written. */
  position: bigint;
}

export interface ReadStreamOptions {
  direction?: "forwards" | "backwards";
  /** Inclusive. Defaults to the start (forwards) or the end (backwards). */
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Omit to start at the beginning. */
  after?: bigint;
  maxCount?: number;
  filter?: EventFilter;
}

export interface EventFilter {
  eventTypes?: readonly string[];
  streamPrefixes?: readonly string[];
}

export interface SubscribeOptions {
  /** Exclusive: deliver events strictly after this position. Omit to start at the beginning. */
  after?: bigint;
  filter?: EventFilter;
}

/** Catch up from a position, then go live: no gap, no duplicate, in position order. */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

/** The last event of a stream (readStreamEnds). */
export interface StreamEnd {
  stream: string;
  type: string;
  position: bigint;
}

export interface ReadStreamEndsOptions {
  /** Streams whose names start with this. */
  prefix: string;
  /** Exclusive: streams named after this one (the last name of the page before). */
  after?: string;
  maxCount: number;
}

/** One append of a sequence: to this stream, if it is at this revision. */
export interface AppendStep {
  stream: string;
  events: readonly NewEvent[];
  expectedRevision: ExpectedRevision;
}

export interface SequenceResult {
  /** The result of each step that was appended: always a prefix of the steps, in order. */
  appended: AppendResult[];
  /**
   * Why the step after that prefix was refused (a WrongExpectedRevisionError or a
   * DuplicateEventIdError); undefined when every step was appended. Later steps were not tried.
   */
  refusal?: Error;
}

/** A stream that retention moves out of the live log, as the archive segment holds it: whole, up to `revision`. */
export interface StreamRemoval {
  stream: string;
  /** The stream's last revision when it was archived: a stream that moved on since is not removed. */
  revision: number;
  /**
   * Only the revisions before this one go, from the first the live log still holds; the stream
   * stays, read from here on, as EventStoreDB's `$tb` (a host stream's closed periods: the
   * revision of the summary that starts the period kept). The stream may have moved on since.
   */
  before?: number;
}

/**
 * One archive segment as the live log records it (src/audit/retention/), in the same commit that
 * removes its streams: the segment file's SHA-256, and the record before it, so the records form
 * a chain of their own inside the live log.
 */
export interface ArchiveSegmentRecord {
  /** 1, 2, 3, ... in the order the segments were written. */
  seq: number;
  /** The file's name in the archive directory. */
  file: string;
  /** SHA-256 (hex) of the file's bytes. */
  sha256: string;
  events: number;
  streams: number;
  /** The first and last position the segment holds. */
  first: string;
  last: string;
  /** SHA-256 of the previous record's JSON (recordText), GENESIS for the first segment. */
  previous: string;
  /** When it was written (ISO-8601). */
  at: string;
}

/** Retention: ended streams out of the live log, into archive segments the store records. */
export interface ArchivingStore {
  /**
   * In one commit (EventStoreDB: the record first, then each stream): removes each stream whole (events, revision index, ids), provided it is still at
   * the revision given, or its revisions before `before`, and records the segment that now holds them. A stream that moved on, or
   * the log's first or last event, is refused with an error and nothing is removed.
   */
  removeStreams(removals: readonly StreamRemoval[], segment: ArchiveSegmentRecord): Promise<{ events: number }>;
  /** The segments recorded so far, in order. */
  readArchiveSegments(): Promise<ArchiveSegmentRecord[]>;
  /** Retention's list of streams where the store's readStreamEnds has none (EventStoreDB). */
  readStreamEnds?(options: ReadStreamEndsOptions): Promise<StreamEnd[]>;
  /** Events after this position stay live whatever their age (EventStoreDB: those the chain's newest checkpoint does not cover). */
  keepAfter?(): Promise<bigint>;
}

export interface EventStore {
  readonly kind: "memory" | "lmdb" | "esdb";
  append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /**
   * Appends the steps in order, each with its own expected-revision check, and stops at the first
   * refused one: the steps before it stay appended. A step depending on the one before (record
   * the ARQ bound only if the handle was allocated) needs no round trip in between: lmdb commits
   * the whole sequence in one transaction, memory in one turn; esdb, which has no multi-stream
   * transactions, appends one step after another. Errors other than a refusal reject; one that
   * comes after a committed step is a SequenceInterruptedError naming the committed prefix.
   */
  appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult>;
  /** Events of one stream; an empty array when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Position of the newest event in the log, or undefined when the log is empty. */
  headPosition(): Promise<bigint | undefined>;
  subscribeToAll(options?: SubscribeOptions): Subscription;
  /**
   * The global hash chain's checkpoints after `after`, in position order: the chain's start (its
   * value there is GENESIS), one every CHECKPOINT_INTERVAL positions (and, in an lmdb log whose
   * chain began as version 1, where version 2 began), and the chain's head (the last event
   * written, marked `head`), each with the chain's version after it (chain.ts). Stores without a
   * global chain (EventStoreDB: no transaction across streams) return none.
   */
  readCheckpoints(options?: { after?: bigint; maxCount?: number }): Promise<ChainCheckpoint[]>;
  /**
   * Position of the last event recorded at or before `time` (the store's clock, recordedAt), or
   * undefined when the log holds no event that old.
   */
  positionAt(time: Date): Promise<bigint | undefined>;
  /**
   * The last event of each stream whose name starts with `prefix`, in the store's order of names
   * (`after` continues it), a page of at most `maxCount` streams at a time. A replay uses it to
   * leave out streams that ended before its point (src/reactors/projector/ended-streams.ts). Undefined when
   * the store cannot list its streams cheaply (EventStoreDB): the replay then leaves nothing out.
   */
  readStreamEnds(options: ReadStreamEndsOptions): Promise<StreamEnd[] | undefined>;
  /**
   * Retention's removal of ended streams into archive segments (docs/audit.md, "Retention"): the
   * embedded store and EventStoreDB (stream delete and `$tb`, esdb-archiving.ts) have it; a store
   * without it (memory) keeps everything.
   */
  readonly archiving?: ArchivingStore;
  close(): Promise<void>;
}

/** Thrown when the expected revision does not match; maps to the GraphQL CONFLICT code. */
export class WrongExpectedRevisionError extends Error {
  readonly code = "CONFLICT";
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | "no_stream",
  ) {
    super(`stream ${stream}: expected revision ${String(expected)} but the stream is at ${String(actual)}`);
    this.name = "WrongExpectedRevisionError";
  }
}

/** Thrown when event ids that already exist are appended in a way that is not an exact retry. */
export class DuplicateEventIdError extends Error {
  readonly code = "CONFLICT";
  constructor(readonly eventId: string, readonly stream: string) {
    super(`event ${eventId} already exists and the append to ${stream} is not an identical retry`);
    this.name = "DuplicateEventIdError";
  }
}

export const positionToString = (p: bigint): string => p.toString(10);

export function positionFromString(s: string): bigint {
  if (!/^\d{1,20}$/.test(s)) throw new RangeError(`not a log position: ${JSON.stringify(s)}`);
  return BigInt(s);
}

export function matchesFilter(e: { type: string; stream: string }, filter?: EventFilter): boolean {
  if (!filter) return true;
  if (filter.eventTypes && !filter.eventTypes.includes(e.type)) return false;
  if (filter.streamPrefixes && !filter.streamPrefixes.some((p) => e.stream.startsWith(p))) return false;
  return true;
}

/** What stops an appendSequence without failing it: a revision conflict or a reused event id. */
export const isRefusal = (err: unknown): err is WrongExpectedRevisionError | DuplicateEventIdError =>
  err instanceof WrongExpectedRevisionError || err instanceof DuplicateEventIdError;

/**
 * A sequence that failed (a transport error, a lost connection) after some of its steps were
 * committed: `appended` is that committed prefix, so that the caller can complete or undo what the
 * sequence began. The step that failed may have been committed too (the answer was lost): a caller
 * that undoes re-reads the streams. `cause` is the error the failed step met.
 */
export class SequenceInterruptedError extends Error {
  constructor(
    readonly appended: readonly AppendResult[],
    override readonly cause: unknown,
  ) {
    super(`the sequence stopped after ${appended.length} committed step(s): ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "SequenceInterruptedError";
  }
}

/**
 * appendSequence for stores without a transaction across streams: one append after another. A
 * refusal stops it (the steps before stay appended); any other error after a committed step
 * rejects with a SequenceInterruptedError naming that prefix (before the first step: the error as is).
 */
export async function appendStepByStep(store: Pick<EventStore, "append">, steps: readonly AppendStep[]): Promise<SequenceResult> {
  const appended: AppendResult[] = [];
  for (const step of steps) {
    try {
      appended.push(await store.append(step.stream, step.events, step.expectedRevision));
    } catch (err) {
      if (isRefusal(err)) return { appended, refusal: err };
      throw appended.length > 0 ? new SequenceInterruptedError([...appended], err) : err;
    }
  }
  return { appended };
}

import { asBinary, open, type Binary, type Database, type RootDatabase } from "lmdb";
import { checkExpectedRevision, checkRetry, type StoredIdRef } from "./append-check.js";
import { AppendNotifier, catchUpSubscription } from "./catch-up.js";
import {
  isRefusal,
  matchesFilter,
  type AppendResult,
  type AppendStep,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SequenceResult,
  type SubscribeOptions,
  type Subscription,
} from "./port.js";

/**
 * The embedded, durable event store: one LMDB environment in a data directory.
 *
 * Key layout (named databases of one environment, so one transaction spans them all):
 *   log     position               -> StoredEvent   the global log, read in key order
 *   heads   stream                 -> Head          the stream's revision and the positions of
 *                                                   its last, still open chunk of revisions
 *   chunks  [stream, firstRev]     -> positions[]   closed chunks of CHUNK revisions each
 *   ids     event id               -> position      idempotent retries and duplicate ids
 * Positions are 1, 2, 3, ... (ordered-binary number keys, exact up to 2^53), bigint at the port.
 *
 * Why chunks: an index entry per event ([stream, revision] -> position) dirties one B-tree page
 * per stream per commit, because every stream's newest entries sit on a page of their own. The
 * open chunk lives in the head instead, which is rewritten by every append anyway and packs many
 * streams per page; a closed chunk costs one write per CHUNK events.
 *
 * Group commit: appends queue up and run, in call order, in one lmdb-js transaction callback, so
 * all appends issued together share one LMDB write transaction and one fsync (100 concurrent
 * writers: one commit). An appendSequence is one entry of that queue: its steps are written one
 * after another in the same transaction, up to the first refused one.
 * Each callback reads (idempotency, expected revision, current position) and writes inside that
 * transaction, so the check and the append are one atomic step. Everything that can throw (the
 * checks, msgpack encoding) runs before the first write, so a failed append leaves nothing behind
 * without the cost of a child transaction per append.
 *
 * Durability: lmdb-js resolves a write when its transaction has committed; with
 * `overlappingSync: false` the commit includes the fsync, so an acknowledged append is on disk.
 */
export interface LmdbEventStoreOptions {
  /** Events per page while a subscription catches up. */
  catchUpPageSize?: number;
}

/** The value stored under a position. The position itself is the key. */
interface StoredEvent {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  /** Milliseconds since the epoch. */
  recordedAt: number;
}

/** A stream's last revision and the positions of its open chunk: revisions revision - (revision % CHUNK) .. revision. */
interface Head {
  revision: number;
  open: number[];
}
type StoredHead = [revision: number, open: number[]];

/** Queued work for the next transaction: one append is a sequence of one step. */
interface PendingSequence {
  steps: readonly AppendStep[];
  /** The result of each step written so far. */
  results: AppendResult[];
  /** Why the step after `results` was not written. */
  error?: unknown;
  settle: (results: AppendResult[], error: unknown) => void;
  reject: (err: unknown) => void;
}

/** Revisions per stream chunk. The open chunk is rewritten by every append to its stream. */
const CHUNK = 32;
const STRUCTURES_KEY = Symbol.for("structures");
const NO_OVERWRITE = { noOverwrite: true } as const;
// LMDB's default key limit is 1978 bytes, and chunk keys also carry a revision.
const MAX_KEY_BYTES = 1024;

export class LmdbEventStore implements EventStore {
  readonly kind = "lmdb" as const;
  private readonly notifier = new AppendNotifier();
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;
  /** Set when a commit failed: the in-memory msgpack structures may be ahead of the disk. */
  private failure: Error | undefined;
  /** The log's last position as of write transaction `txnId`; saves a cursor per append. */
  private txnId = -1;
  private txnLastPosition = 0;
  /** Whether transaction `txnId` appended events (so it commits, as txnId). */
  private txnAppended = false;
  /** The log database's own msgpack encoder (it knows the shared structures), and a raw view to put its output. */
  private readonly logEncoder: { encode(value: unknown): Uint8Array };
  private readonly logRaw: Database<Binary, number>;
  /** Appends waiting for the next transaction. */
  private queue: PendingSequence[] = [];
  /** What the running write transaction appended, in log order, when subscriptions are fed it. */
  private txnEvents: RecordedEvent[] | undefined;

  private constructor(
    private readonly env: RootDatabase,
    private readonly log: Database<StoredEvent, number>,
    private readonly heads: Database<StoredHead, string>,
    private readonly chunks: Database<number[], [string, number]>,
    private readonly ids: Database<number, string>,
    private readonly options: LmdbEventStoreOptions,
  ) {
    this.logEncoder = (log as unknown as { encoder: { encode(value: unknown): Uint8Array } }).encoder;
    this.logRaw = log as unknown as Database<Binary, number>;
  }

  /** Opens (creating if needed) the store in directory `dir`. */
  static async open(dir: string, options: LmdbEventStoreOptions = {}): Promise<LmdbEventStore> {
    const env = open({
      path: dir,
      // lmdb-js defaults to overlappingSync on Linux, where a write promise resolves at commit
      // and the fsync happens later: an acknowledged append could be lost on power failure.
      overlappingSync: false,
      noSync: false,
      maxDbs: 8,
    });
    return new LmdbEventStore(
      env,
      // Shared msgpack structures: an object shape is stored once, not per event, which makes
      // decoding the log about three times faster (catch-up reads are bound by decoding).
      env.openDB<StoredEvent, number>({ name: "log", sharedStructuresKey: STRUCTURES_KEY }),
      env.openDB<StoredHead, string>({ name: "heads" }),
      env.openDB<number[], [string, number]>({ name: "chunks" }),
      env.openDB<number, string>({ name: "ids" }),
      options,
    );
  }

  async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.enqueue([{ stream, events, expectedRevision }], reject, (results, error) => (error === undefined ? resolve(results[0]!) : reject(error)));
    });
  }

  async appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    return new Promise<SequenceResult>((resolve, reject) => {
      this.enqueue(steps, reject, (appended, error) => {
        if (error === undefined) resolve({ appended });
        else if (isRefusal(error)) resolve({ appended, refusal: error });
        else reject(error);
      });
    });
  }

  private enqueue(steps: readonly AppendStep[], reject: (err: unknown) => void, settle: PendingSequence["settle"]): void {
    if (this.closed) throw new Error("event store is closed");
    if (this.failure) throw new Error(`a commit failed earlier; reopen the event store (${this.failure.message})`);
    for (const step of steps) validate(step.stream, step.events);
    this.queue.push({ steps, results: [], settle, reject });
    if (this.queue.length === 1) queueMicrotask(() => this.commit());
  }

  /**
   * Writes everything queued so far in one transaction callback. lmdb-js would batch separate
   * callbacks into the same transaction too; one callback for all of them saves its per-callback
   * cost. Each append is still checked and written on its own: a conflict fails that append only
   * (and, in a sequence, stops the sequence there).
   */
  private commit(): void {
    const batch = this.queue;
    this.queue = [];
    const recordedAt = Date.now();
    let written: RecordedEvent[] | undefined;
    const committed = this.env.transaction(() => {
      this.txnEvents = written = this.notifier.feeding ? [] : undefined;
      for (const q of batch) {
        for (const step of q.steps) {
          try {
            q.results.push(this.write(step.stream, step.events, step.expectedRevision, recordedAt));
          } catch (err) {
            q.error = err;
            break;
          }
        }
      }
    });
    committed.then(
      () => {
        let appended = false;
        let unforeseen = false;
        for (const q of batch) {
          appended ||= q.results.some((_, i) => q.steps[i]!.events.length > 0);
          if (q.error === undefined || isRefusal(q.error)) q.settle(q.results, q.error);
          else if (q.error instanceof EncodeError) q.settle(q.results, q.error.cause);
          else {
            // Not a rule of the port: something we did not foresee failed half way through.
            this.failure ??= q.error as Error;
            unforeseen = true;
            q.reject(q.error);
          }
        }
        // After an unforeseen failure, subscribers read the log rather than trust the feed.
        if (appended) this.notifier.fire(unforeseen ? undefined : written);
      },
      (err: unknown) => {
        this.failure ??= err as Error;
        for (const q of batch) q.reject(err);
      },
    );
  }

  /** Runs inside the write transaction: everything it reads is the state it writes over. */
  private write(stream: string, events: readonly NewEvent[], expected: ExpectedRevision, recordedAt: number): AppendResult {
    const head = this.readHead(stream);
    if (events.length === 0) {
      checkExpectedRevision(stream, expected, head?.revision);
      return head ? { revision: head.revision, position: BigInt(head.open.at(-1)!) } : { revision: -1, position: 0n };
    }
    const first = this.lastPosition() + 1;
    const firstRevision = head ? head.revision + 1 : 0;
    // Encode before the first write: an encoding error then leaves nothing behind.
    const encoded = events.map((e, i) => {
      const revision = firstRevision + i;
      return this.encode({ id: e.id, stream, revision, type: e.type, data: e.data, metadata: e.metadata, recordedAt });
    });

    // Claim the ids with inserts that refuse to overwrite: the duplicate check and the index write
    // in one B-tree descent. An id that exists means a retry or a reuse; undo our claims and let
    // the shared rule decide. Claims are undone the same way when the revision check fails.
    let claimed = 0;
    while (claimed < events.length && this.ids.putSync(events[claimed]!.id, first + claimed, NO_OVERWRITE)) claimed++;
    if (claimed < events.length) {
      this.release(events, claimed);
      const retry = checkRetry(stream, events, (id) => this.lookupId(id));
      if (!retry) throw new Error(`event id index is inconsistent for an append to ${stream}`);
      return retry;
    }
    try {
      checkExpectedRevision(stream, expected, head?.revision);
    } catch (err) {
      this.release(events, claimed);
      throw err;
    }

    let open = head ? head.open : [];
    const fed = this.txnEvents;
    const date = fed && new Date(recordedAt);
    for (let i = 0; i < events.length; i++) {
      const revision = firstRevision + i;
      if (revision % CHUNK === 0 && open.length > 0) {
        this.chunks.put([stream, revision - CHUNK], open);
        open = [];
      }
      open.push(first + i);
      this.logRaw.put(first + i, asBinary(encoded[i]!));
      const e = events[i]!;
      // As readAll would return it (the feed shares data and metadata: events are immutable).
      fed?.push({ id: e.id, stream, revision, position: BigInt(first + i), type: e.type, data: e.data, metadata: e.metadata, recordedAt: date! });
    }
    const revision = firstRevision + events.length - 1;
    const last = first + events.length - 1;
    this.heads.put(stream, [revision, open]);
    this.txnLastPosition = last;
    this.txnAppended = true;
    return { revision, position: BigInt(last) };
  }

  private release(events: readonly NewEvent[], claimed: number): void {
    for (let i = 0; i < claimed; i++) this.ids.removeSync(events[i]!.id);
  }

  private readHead(stream: string): Head | undefined {
    const stored = this.heads.get(stream);
    return stored && { revision: stored[0], open: stored[1] };
  }

  private encode(stored: StoredEvent): Uint8Array {
    try {
      // A copy: msgpack's output buffer is reused by later encodes.
      return Uint8Array.prototype.slice.call(this.logEncoder.encode(stored));
    } catch (cause) {
      throw new EncodeError(cause);
    }
  }

  private lastPosition(): number {
    const txnId = this.env.getWriteTxnId();
    if (txnId !== this.txnId) {
      // Transaction ids count commits: when ours appended and this one comes right after it,
      // nobody else wrote in between, and the position we ended at is still the last.
      const follows = txnId === this.txnId + 1 && this.txnAppended;
      this.txnId = txnId;
      this.txnAppended = false;
      if (!follows) this.txnLastPosition = this.lastLogKey() ?? 0;
    }
    return this.txnLastPosition;
  }

  private lastLogKey(): number | undefined {
    for (const key of this.log.getKeys({ reverse: true, limit: 1 })) return key;
    return undefined;
  }

  private lookupId(id: string): StoredIdRef | undefined {
    const position = this.ids.get(id);
    if (position === undefined) return undefined;
    const stored = this.log.get(position)!;
    return { stream: stored.stream, revision: stored.revision, position: BigInt(position) };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const head = this.readHead(stream);
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (!head || max <= 0) return [];
    const { revision: last, open } = head;
    const backwards = options.direction === "backwards";
    const from = backwards ? Math.min(options.fromRevision ?? last, last) : Math.max(options.fromRevision ?? 0, 0);
    const to = backwards ? Math.max(from - max + 1, 0) : Math.min(from + max - 1, last);
    if (backwards ? from < 0 : from > last) return [];

    // Positions of revisions lo..hi: closed chunks from the chunk index, then the open chunk.
    const [lo, hi] = backwards ? [to, from] : [from, to];
    const openStart = last - (last % CHUNK);
    const positions: number[] = [];
    if (lo < openStart) {
      const range = this.chunks.getRange({ start: [stream, lo - (lo % CHUNK)], end: [stream, Math.min(hi, openStart - 1) + 1] });
      for (const { key, value } of range) {
        const base = key[1];
        for (let r = Math.max(lo, base); r <= Math.min(hi, base + CHUNK - 1); r++) positions.push(value[r - base]!);
      }
    }
    for (let r = Math.max(lo, openStart); r <= hi; r++) positions.push(open[r - openStart]!);
    if (backwards) positions.reverse();
    return positions.map((p) => toRecorded(p, this.log.get(p)!));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (max <= 0) return [];
    const start = options.after === undefined ? 1 : Number(options.after) + 1;
    const out: RecordedEvent[] = [];
    // Without a filter LMDB can stop at maxCount itself; with one we scan until enough match.
    const limit = options.filter || !Number.isFinite(max) ? undefined : max;
    for (const { key, value } of this.log.getRange({ start, limit })) {
      if (!matchesFilter(value, options.filter)) continue;
      out.push(toRecorded(key, value));
      if (out.length >= max) break;
    }
    return out;
  }

  async headPosition(): Promise<bigint | undefined> {
    const last = this.lastLogKey();
    return last === undefined ? undefined : BigInt(last);
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    if (this.closed) throw new Error("event store is closed");
    const inner = catchUpSubscription((o) => this.readAll(o), this.notifier, {
      ...options,
      pageSize: this.options.catchUpPageSize ?? 1000,
    });
    const sub: Subscription = {
      [Symbol.asyncIterator]: () => inner[Symbol.asyncIterator](),
      close: async () => {
        this.subscriptions.delete(sub);
        await inner.close();
      },
    };
    this.subscriptions.add(sub);
    return sub;
  }

  /** Ends every subscription, waits for appends in flight to commit, and closes the environment. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    this.notifier.fire();
    await this.env.close();
  }
}

/** Data or metadata that msgpack cannot encode; thrown before anything was written. */
class EncodeError extends Error {
  constructor(override readonly cause: unknown) {
    super("event data or metadata cannot be encoded");
  }
}

function toRecorded(position: number, s: StoredEvent): RecordedEvent {
  return {
    id: s.id,
    stream: s.stream,
    revision: s.revision,
    position: BigInt(position),
    type: s.type,
    data: s.data,
    metadata: s.metadata,
    recordedAt: new Date(s.recordedAt),
  };
}

/** Rejects, before the write transaction, what LMDB could not store as a key. */
function validate(stream: string, events: readonly NewEvent[]): void {
  if (typeof stream !== "string" || stream.length === 0) throw new TypeError("stream name must be a non-empty string");
  if (tooLong(stream)) throw new RangeError(`stream name longer than ${MAX_KEY_BYTES} bytes`);
  for (const e of events) {
    if (typeof e.id !== "string" || e.id.length === 0) {
      throw new TypeError(`event id must be a non-empty string (stream ${stream})`);
    }
    if (tooLong(e.id)) throw new RangeError(`event id longer than ${MAX_KEY_BYTES} bytes`);
  }
}

// A UTF-16 code unit takes at most 3 UTF-8 bytes: short strings need no byte count.
const tooLong = (s: string): boolean => s.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(s) > MAX_KEY_BYTES;

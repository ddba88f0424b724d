import { open, type RootDatabase } from "lmdb";
import { AppendNotifier, catchUpSubscription } from "./catch-up.js";
import { CHECKPOINT_INTERVAL, contentText, type ChainCheckpoint } from "./chain.js";
import { readCheckpoints } from "./lmdb-chain.js";
import { positionsOf, readHead, readStreamEnds, toRecorded, validate, type LmdbDatabases, type StoredChainHead, type StoredEvent, type StoredHead } from "./lmdb-layout.js";
import { EncodeError, LmdbWriter } from "./lmdb-writer.js";
import { readSegments, removeStreamsNow } from "./lmdb-removal.js";
import { isRefusal, matchesFilter } from "./port.js";
import type { AppendResult, AppendStep, ArchiveSegmentRecord, ArchivingStore, EventStore, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamEndsOptions, ReadStreamOptions, RecordedEvent, SequenceResult, StreamEnd, SubscribeOptions, Subscription } from "./port.js";

/**
 * The embedded, durable event store: one LMDB environment in a data directory (its layout:
 * lmdb-layout.ts; one append inside the write transaction: lmdb-writer.ts).
 *
 * Group commit: appends queue up and run, in call order, in one lmdb-js transaction callback, so
 * all appends issued together share one LMDB write transaction and one fsync (100 concurrent
 * writers: one commit). An appendSequence is one entry of that queue: its steps are written one
 * after another in the same transaction, up to the first refused one.
 *
 * Durability: lmdb-js resolves a write when its transaction has committed; with
 * `overlappingSync: false` the commit includes the fsync, so an acknowledged append is on disk.
 *
 * Hash chains (chain.ts) are written in the same transaction as the events: the content texts
 * are serialised when an append is queued (while the previous commit is syncing), and hashed
 * with their links inside the transaction.
 */
export interface LmdbEventStoreOptions {
  /** Events per page while a subscription catches up. */
  catchUpPageSize?: number;
  /** Positions between global-chain checkpoints (default CHECKPOINT_INTERVAL). */
  checkpointInterval?: number;
}

/** Queued work for the next transaction: one append is a sequence of one step. */
interface PendingSequence {
  steps: readonly AppendStep[];
  /** The content text of each step's events (chain.ts), hashed in the transaction. */
  texts: string[][];
  /** The result of each step written so far. */
  results: AppendResult[];
  /** Why the step after `results` was not written. */
  error?: unknown;
  settle: (results: AppendResult[], error: unknown) => void;
  reject: (err: unknown) => void;
}

const STRUCTURES_KEY = Symbol.for("structures");

export class LmdbEventStore implements EventStore {
  readonly kind = "lmdb" as const;
  private readonly notifier = new AppendNotifier();
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;
  /** Set when a commit failed: the in-memory msgpack structures may be ahead of the disk. */
  private failure: Error | undefined;
  /** Appends waiting for the next transaction. */
  private queue: PendingSequence[] = [];
  private readonly writer: LmdbWriter;

  private constructor(
    private readonly env: RootDatabase,
    private readonly db: LmdbDatabases,
    private readonly options: LmdbEventStoreOptions,
  ) {
    this.writer = new LmdbWriter(env, db, options.checkpointInterval ?? CHECKPOINT_INTERVAL);
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
    const db: LmdbDatabases = {
      // Shared msgpack structures: an object shape is stored once, not per event, which makes
      // decoding the log about three times faster (catch-up reads are bound by decoding).
      log: env.openDB<StoredEvent, number>({ name: "log", sharedStructuresKey: STRUCTURES_KEY }),
      heads: env.openDB<StoredHead, string>({ name: "heads" }),
      chunks: env.openDB<number[], [string, number]>({ name: "chunks" }),
      ids: env.openDB<number, string>({ name: "ids" }),
      checkpoints: env.openDB<string, number>({ name: "checkpoints" }),
      chain: env.openDB<StoredChainHead, string>({ name: "chain" }),
      archive: env.openDB<ArchiveSegmentRecord, number>({ name: "archive" }),
    };
    return new LmdbEventStore(env, db, options);
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
    // Data that is not JSON cannot be hashed: refused here, before the transaction.
    const texts = steps.map((step) => step.events.map((e) => contentText(step.stream, e)));
    this.queue.push({ steps, texts, results: [], settle, reject });
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
      written = this.notifier.feeding ? [] : undefined;
      for (const q of batch) {
        for (const [i, step] of q.steps.entries()) {
          try {
            q.results.push(this.writer.write(step.stream, step.events, step.expectedRevision, recordedAt, q.texts[i]!, written));
          } catch (err) {
            q.error = err;
            break;
          }
        }
      }
      this.writer.finish();
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

  /**
   * Another process committed to this environment (src/infra/eventstore/forwarded-writes.ts: the
   * API workers' log is written by the primary). Reads after this call see that commit: lmdb-js
   * keeps a read transaction until the next turn of the event loop, so it is renewed here; the
   * subscriptions then read the new events from the log.
   */
  committedElsewhere(): void {
    if (this.closed) return;
    this.env.resetReadTxn();
    this.notifier.fire();
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const head = readHead(this.db.heads, stream);
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (!head || max <= 0) return [];
    const last = head.revision;
    // Revisions before the truncation mark are in the archive (lmdb-removal.ts).
    const first = head.truncatedBefore ?? 0;
    const backwards = options.direction === "backwards";
    const from = backwards ? Math.min(options.fromRevision ?? last, last) : Math.max(options.fromRevision ?? 0, first);
    const to = backwards ? Math.max(from - max + 1, first) : Math.min(from + max - 1, last);
    if (backwards ? from < first : from > last) return [];

    const positions = backwards ? positionsOf(this.db.chunks, stream, head, to, from).reverse() : positionsOf(this.db.chunks, stream, head, from, to);
    return positions.map((p) => toRecorded(p, this.db.log.get(p)!));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (max <= 0) return [];
    const start = options.after === undefined ? 1 : Number(options.after) + 1;
    const out: RecordedEvent[] = [];
    // Without a filter LMDB can stop at maxCount itself; with one we scan until enough match.
    const limit = options.filter || !Number.isFinite(max) ? undefined : max;
    for (const { key, value } of this.db.log.getRange({ start, limit })) {
      if (!matchesFilter(value, options.filter)) continue;
      out.push(toRecorded(key, value));
      if (out.length >= max) break;
    }
    return out;
  }

  async headPosition(): Promise<bigint | undefined> {
    const last = this.writer.lastLogKey();
    return last === undefined ? undefined : BigInt(last);
  }

  async readCheckpoints(options: { after?: bigint; maxCount?: number } = {}): Promise<ChainCheckpoint[]> {
    return readCheckpoints(this.db, options);
  }

  async readStreamEnds(options: ReadStreamEndsOptions): Promise<StreamEnd[]> {
    return readStreamEnds(this.db, options);
  }

  /**
   * A binary search over positions by record time. Retention leaves gaps (removed streams): a
   * position without an event is judged by the next event the log holds, which is at least as late.
   */
  async positionAt(time: Date): Promise<bigint | undefined> {
    const head = this.writer.lastLogKey() ?? 0;
    const t = time.getTime();
    let lo = 1;
    let hi = head + 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.recordedAtOrAfter(mid) <= t) lo = mid + 1;
      else hi = mid;
    }
    if (lo <= 1) return undefined;
    // The last event at or before lo - 1 (a gap there belongs to the event before it).
    for (const key of this.db.log.getKeys({ start: lo - 1, reverse: true, limit: 1 })) return BigInt(key);
    return undefined;
  }

  private recordedAtOrAfter(position: number): number {
    const at = this.db.log.get(position);
    if (at) return at.recordedAt;
    for (const { value } of this.db.log.getRange({ start: position, limit: 1 })) return value.recordedAt;
    return Number.POSITIVE_INFINITY;
  }

  readonly archiving: ArchivingStore = {
    removeStreams: async (removals, segment) => {
      if (this.closed) throw new Error("event store is closed");
      let events = 0;
      await this.env.transaction(() => {
        events = removeStreamsNow(this.db, removals, segment, this.writer.lastLogKey());
      });
      return { events };
    },
    readArchiveSegments: async (): Promise<ArchiveSegmentRecord[]> => readSegments(this.db),
  };

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

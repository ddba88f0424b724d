import { BACKWARDS, END, FORWARDS, NO_STREAM, StreamDeletedError, StreamNotFoundError, WrongExpectedVersionError, type AllStreamResolvedEvent } from "@eventstore/db-client";
import { LRUCache } from "lru-cache";
import { checkExpectedRevision } from "./append-check.js";
import { chainHashes, contentText, versionOf, type ChainCheckpoint } from "./chain.js";
import { ChainKeeper, readChainCheckpoints } from "./esdb-chain.js";
import { EsdbArchiving } from "./esdb-archiving.js";
import { connectClient, type EsdbClient } from "./esdb-client.js";
import { cancelOnExit, checkStreamName, fromPosition, namespacePrefix, ours, serverFilter, toEsdbExpected, toProposed, toRecorded } from "./esdb-mapping.js";
import { KnownPositions } from "./esdb-positions.js";
import { esdbSubscription } from "./esdb-subscription.js";
import { appendStepByStep, DuplicateEventIdError, matchesFilter, WrongExpectedRevisionError } from "./port.js";
import type { AppendResult, AppendStep, EventFilter, EventStore, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamOptions, RecordedEvent, SequenceResult, SubscribeOptions, Subscription } from "./port.js";

/**
 * EventStoreDB (@eventstore/db-client 6.2.1, through the EsdbClient interface) behind the EventStore
 * port, for production. Tested against a stand-in of the server (test/support/esdb-standin/).
 *
 * - Our position is the event's commit position in $all. Reads and subscriptions that start at a
 *   position skip what is at or before it, so `after` is exclusive as the port says. A position the
 *   adapter has not seen is checked before it is read from (esdb-positions.ts).
 * - Namespace (EVENTSTORE_NAMESPACE): every stream is named `@<namespace>/<stream>` on the server,
 *   reads of $all and subscriptions ask the server for that prefix only, and events of other
 *   namespaces, system streams and system events (`$`) are never returned. The default namespace
 *   keeps the names as they are and leaves out streams starting with `$` or `@`.
 * - EventStoreDB only accepts UUID event ids. Other ids (or UUIDs not in lower-case canonical
 *   form) are sent as a name-based UUID and the original travels in metadata, so reads return
 *   the id the caller gave and retries of the same id stay idempotent.
 * - Idempotency is EventStoreDB's: within a stream, for the same ids at the same expected
 *   revision. Unlike lmdb and memory it does not reject an id reused in another stream.
 * - Hash chain (chain.ts): each event's hash travels in its metadata (`chainHash`, taken out again
 *   on reads). It links to the stream's previous event, so the adapter appends at an exact
 *   revision: "any" and "stream_exists" read the stream's last event, append at its revision, and
 *   when another writer got there first decide again, as often as it takes (EventStoreDB never
 *   refuses them for a concurrent append, and neither does the adapter). Appends to one stream
 *   from this process go one at a time. A retry of an append made with "any" is recognised among
 *   the stream's last RETRY_WINDOW events (EventStoreDB's own check for "any" is also best effort).
 *   After each append the adapter reads back the last event it reported, so the hash and position
 *   it keeps are the stored ones, also when the server took the append as an idempotent retry.
 * - EventStoreDB has no transaction across streams, so the global chain's checkpoints are recorded
 *   after the fact, in a stream of the namespace (esdb-chain.ts), once this process has appended
 *   an interval's worth of events.
 */
/** How far back an "any" append looks for its own events (an idempotent retry). */
const RETRY_WINDOW = 64;
/** Streams whose last revision and hash are remembered. */
const LAST_CACHE = 10_000;
/** Events a read of $all asks the server for at a time when the caller set no maxCount. */
const PAGE = 4096;

export interface EsdbEventStoreOptions {
  /** EVENTSTORE_NAMESPACE: the namespace of this deployment's streams (default: none). */
  namespace?: string;
  /** Events between global-chain checkpoints (default CHECKPOINT_INTERVAL). */
  checkpointInterval?: number;
}

export class EsdbEventStore implements EventStore {
  readonly kind = "esdb" as const;
  private readonly subscriptions = new Set<Subscription>();
  /** stream -> its last revision and hash, as this client last wrote or read them. */
  private readonly last = new LRUCache<string, { revision: number; hash: string | undefined }>({ max: LAST_CACHE });
  /** stream -> the end of the chain of appends to it from this process. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly positions: KnownPositions;
  private readonly prefix: string;
  private readonly chain: ChainKeeper;
  /** Retention (esdb-archiving.ts): ended streams deleted, hosts' closed periods cut with `$tb`. */
  readonly archiving: EsdbArchiving;

  constructor(
    private readonly client: EsdbClient,
    options: EsdbEventStoreOptions = {},
  ) {
    this.prefix = namespacePrefix(options.namespace);
    this.positions = new KnownPositions(client);
    const chainStore = {
      readAll: (o: ReadAllOptions) => this.readAll(o),
      readStream: (stream: string, o: ReadStreamOptions) => this.readStream(stream, o),
      append: (stream: string, events: readonly NewEvent[], expected: ExpectedRevision) => this.appendQuietly(stream, events, expected),
    };
    this.chain = new ChainKeeper(chainStore, options.checkpointInterval);
    this.archiving = new EsdbArchiving({
      store: this,
      deleteStream: async (stream, revision) => void (await this.client.deleteStream(this.prefix + stream, { expectedRevision: BigInt(revision) })),
      truncateBefore: async (stream, revision) => void (await this.client.setStreamMetadata(this.prefix + stream, { truncateBefore: revision })),
    });
  }

  /** Connects with a connection string such as `esdb://localhost:2113?tls=false` (default: EVENTSTORE_URL). */
  static connect(url: string | undefined = process.env.EVENTSTORE_URL, options: EsdbEventStoreOptions = {}): EsdbEventStore {
    if (!url) throw new Error("EVENTSTORE_URL is not set (e.g. esdb://localhost:2113?tls=false)");
    return new EsdbEventStore(connectClient(url), options);
  }

  /** EventStoreDB has no transaction across streams: the steps go one after another. */
  appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    return appendStepByStep(this, steps);
  }

  async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    const r = await this.appendQuietly(stream, events, expectedRevision);
    this.chain.appended(events.length);
    return r;
  }

  /** Records the global chain's checkpoints that are due now (they are also recorded as appends go on). */
  recordCheckpoints(): Promise<void> {
    return this.chain.record();
  }

  /** An append that does not count towards the next checkpoint (the checkpoints' own). */
  private async appendQuietly(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    checkStreamName(stream);
    if (events.length === 0) return this.checkOnly(stream, expectedRevision);
    const seen = new Set<string>();
    for (const e of events) {
      if (seen.has(e.id)) throw new DuplicateEventIdError(e.id, stream);
      seen.add(e.id);
    }
    // Before anything is sent: data that is not JSON is refused here.
    const texts = events.map((e) => contentText(stream, e));
    const versions = events.map(versionOf);
    return this.oneAtATime(stream, () => this.appendNow(stream, events, texts, versions, expectedRevision));
  }

  private oneAtATime<T>(stream: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(stream) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(stream, tail);
    void tail.then(() => this.queues.get(stream) === tail && this.queues.delete(stream));
    return run;
  }

  private async appendNow(stream: string, events: readonly NewEvent[], texts: string[], versions: number[], expected: ExpectedRevision): Promise<AppendResult> {
    const exact = typeof expected === "number" || expected === "no_stream";
    if (!exact) {
      const retry = await this.findRetry(stream, events);
      if (retry) return retry;
    }
    for (;;) {
      const prev = await this.lastOf(stream, expected);
      if (expected === "stream_exists" && !prev) throw new WrongExpectedRevisionError(stream, expected, "no_stream");
      const hashes = chainHashes(prev?.hash, prev ? prev.revision + 1 : 0, texts, versions);
      const payload = events.map((e, i) => toProposed(e, hashes[i]!, versions[i]!));
      const sent: ExpectedRevision = exact ? expected : prev ? prev.revision : "no_stream";
      let actual: number | "no_stream";
      try {
        const r = await this.client.appendToStream(this.prefix + stream, payload, { expectedRevision: toEsdbExpected(sent) });
        if (r.success) return await this.settle(stream, Number(r.nextExpectedRevision));
        // A client that reports refusals as results: a refusal all the same.
        actual = r.nextExpectedRevision < 0n ? "no_stream" : Number(r.nextExpectedRevision);
      } catch (err) {
        // Refused, or no answer: what the stream holds now is not known here.
        this.last.delete(stream);
        if (!(err instanceof WrongExpectedVersionError)) throw err;
        actual = err.actualVersion === NO_STREAM ? "no_stream" : Number(err.actualVersion);
      }
      this.last.delete(stream);
      if (exact) throw new WrongExpectedRevisionError(stream, expected, actual);
    }
  }

  /**
   * The result of a successful append, from the stored event at the revision the server reported:
   * an idempotent retry wrote nothing, and its answer may carry no position or another content's
   * hash would be wrong to keep.
   */
  private async settle(stream: string, revision: number): Promise<AppendResult> {
    const [e] = await this.readStream(stream, { fromRevision: revision, maxCount: 1 });
    if (!e) throw new Error(`append to ${stream} succeeded but revision ${revision} cannot be read`);
    this.last.set(stream, { revision: e.revision, hash: e.hash });
    return { revision: e.revision, position: e.position };
  }

  /** The stream's last revision and hash (undefined: no stream), from the cache when it matches what the caller expects. */
  private async lastOf(stream: string, expected: ExpectedRevision): Promise<{ revision: number; hash: string | undefined } | undefined> {
    if (expected === "no_stream") return undefined;
    const cached = this.last.get(stream);
    if (cached && typeof expected === "number" && cached.revision === expected) return cached;
    const [last] = await this.readStream(stream, { direction: "backwards", maxCount: 1 });
    if (!last) return undefined;
    this.last.set(stream, { revision: last.revision, hash: last.hash });
    return { revision: last.revision, hash: last.hash };
  }

  /** An "any" append whose events are already the stream's (a retry): the original result. */
  private async findRetry(stream: string, events: readonly NewEvent[]): Promise<AppendResult | undefined> {
    const recent = await this.readStream(stream, { direction: "backwards", maxCount: RETRY_WINDOW });
    const i = recent.findIndex((e) => e.id === events[0]!.id);
    if (i < 0) return undefined;
    const run = recent.slice(0, i + 1).reverse();
    if (run.length < events.length || events.some((e, k) => run[k]!.id !== e.id)) throw new DuplicateEventIdError(events[0]!.id, stream);
    const lastOfRun = run[events.length - 1]!;
    return { revision: lastOfRun.revision, position: lastOfRun.position };
  }

  /** An empty append writes nothing, so checking the revision against a fresh read is exact. */
  private async checkOnly(stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    const [last] = await this.readStream(stream, { direction: "backwards", maxCount: 1 });
    checkExpectedRevision(stream, expected, last?.revision);
    return last ? { revision: last.revision, position: last.position } : { revision: -1, position: 0n };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === "backwards";
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (max <= 0) return [];
    let from = options.fromRevision;
    if (from !== undefined && backwards) {
      if (from < 0) return [];
      // Reading backwards from past the end is the same as reading from the end.
      const [last] = await this.readStream(stream, { direction: "backwards", maxCount: 1 });
      if (!last) return [];
      from = Math.min(from, last.revision);
    }
    const fromRevision = from === undefined ? (backwards ? END : "start") : BigInt(Math.max(from, 0));
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(this.prefix + stream, { direction: backwards ? BACKWARDS : FORWARDS, fromRevision, maxCount: max });
      for await (const resolved of read) {
        if (!resolved.event || resolved.event.type.startsWith("$")) continue;
        const e = toRecorded(resolved.event, resolved.commitPosition, this.prefix);
        this.positions.add(e.position);
        out.push(e);
      }
    } catch (err) {
      // A stream that never existed, or was deleted, holds no events.
      if (err instanceof StreamNotFoundError || err instanceof StreamDeletedError) return [];
      throw err;
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (max <= 0) return [];
    await this.positions.check(options.after);
    const out: RecordedEvent[] = [];
    let cursor = options.after;
    // The server filters (serverFilter); pages go on while the re-check here leaves some out.
    for (;;) {
      const ask = Math.min(max - out.length + 1, PAGE);
      let got = 0;
      const read = this.client.readAll({ direction: FORWARDS, fromPosition: fromPosition(cursor), maxCount: ask, filter: serverFilter(options.filter, this.prefix) });
      for await (const resolved of cancelOnExit(read)) {
        got++;
        const position = resolved.event?.position.commit;
        const e = this.mine(resolved, cursor, options.filter);
        if (position !== undefined && (cursor === undefined || position > cursor)) cursor = position;
        if (!e) continue;
        out.push(e);
        if (out.length >= max) return out;
      }
      if (got < ask) return out;
    }
  }

  /** The namespace's event in a read of $all that passes `filter`, or undefined. */
  private mine(resolved: AllStreamResolvedEvent, after: bigint | undefined, filter: EventFilter | undefined): RecordedEvent | undefined {
    const e = ours(resolved, after, this.prefix);
    if (!e || !matchesFilter(e, filter)) return undefined;
    this.positions.add(e.position);
    return e;
  }

  /** The newest event of the namespace: $all read backwards, the server leaving out the others. */
  async headPosition(): Promise<bigint | undefined> {
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, filter: serverFilter(undefined, this.prefix) });
    for await (const resolved of cancelOnExit(read)) {
      const e = this.mine(resolved, undefined, undefined);
      if (e) return e.position;
    }
    return undefined;
  }

  /** The chain's start and the checkpoints recorded in the namespace (esdb-chain.ts); no head. */
  readCheckpoints(options: { after?: bigint; maxCount?: number } = {}): Promise<ChainCheckpoint[]> {
    return readChainCheckpoints(this, options);
  }

  /**
   * Listing streams takes the $streams system projection, which may be off: a replay leaves
   * nothing out on EventStoreDB (its read models are built from every event).
   */
  async readStreamEnds(): Promise<undefined> {
    return undefined;
  }

  /** EventStoreDB has no index by time: reads $all backwards from the end (cost: the events since `time`). */
  async positionAt(time: Date): Promise<bigint | undefined> {
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, filter: serverFilter(undefined, this.prefix) });
    for await (const resolved of cancelOnExit(read)) {
      const e = this.mine(resolved, undefined, undefined);
      if (e && e.recordedAt.getTime() <= time.getTime()) return e.position;
    }
    return undefined;
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    const { after, filter } = options;
    const subscription = esdbSubscription({
      open: async () => {
        await this.positions.check(after);
        return this.client.subscribeToAll({ fromPosition: fromPosition(after), filter: serverFilter(filter, this.prefix) });
      },
      pick: (resolved) => this.mine(resolved, after, filter),
      onClose: (s) => this.subscriptions.delete(s),
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  async close(): Promise<void> {
    await this.chain.settled();
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}

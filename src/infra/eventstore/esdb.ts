import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
} from "@eventstore/db-client";
import { LRUCache } from "lru-cache";
import { checkExpectedRevision } from "./append-check.js";
import { chainHashes, contentText, versionOf, type ChainCheckpoint } from "./chain.js";
import { appendStepByStep, DuplicateEventIdError, matchesFilter, WrongExpectedRevisionError } from "./port.js";
import { cancelOnExit, fromPosition, ours, serverFilter, toEsdbExpected, toProposed, toRecorded } from "./esdb-mapping.js";
import type { AppendResult, AppendStep, EventStore, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamOptions, RecordedEvent, SequenceResult, SubscribeOptions, Subscription } from "./port.js";

/**
 * EventStoreDB (@eventstore/db-client 6.2.1) behind the EventStore port, for production.
 *
 * - Our position is the event's commit position in $all. Reads and subscriptions that start at a
 *   position skip what is at or before it, so `after` is exclusive as the port says.
 * - System streams and events ($-prefixed names and types) are never returned.
 * - EventStoreDB only accepts UUID event ids. Other ids (or UUIDs not in lower-case canonical
 *   form) are sent as a name-based UUID and the original travels in metadata, so reads return
 *   the id the caller gave and retries of the same id stay idempotent.
 * - Idempotency is EventStoreDB's: within a stream, for the same ids at the same expected
 *   revision (or "any"). Unlike lmdb and memory it does not reject an id reused in another stream.
 * - Hash chain (chain.ts): each event's hash travels in its metadata (`chainHash`, taken out again
 *   on reads). It links to the stream's previous event, so the adapter appends at an exact
 *   revision: "any" and "stream_exists" read the stream's last event (or take it from a small
 *   cache), append at its revision, and try again if another writer got there first. A retry of
 *   an append made with "any" is recognised among the stream's last RETRY_WINDOW events.
 *   EventStoreDB has no transaction across streams, so there is no global chain (no checkpoints).
 */
/** How far back an "any" append looks for its own events (an idempotent retry). */
const RETRY_WINDOW = 64;
/** Attempts of an "any" append racing other writers. */
const ANY_ATTEMPTS = 10;
/** Streams whose last revision and hash are remembered. */
const LAST_CACHE = 10_000;
/** How far back headPosition looks, past system events, for the newest application event. */
const HEAD_SCAN_LIMIT = 10_000;


export class EsdbEventStore implements EventStore {
  readonly kind = "esdb" as const;
  private readonly subscriptions = new Set<Subscription>();
  /** stream -> its last revision and hash, as this client last wrote or read them. */
  private readonly last = new LRUCache<string, { revision: number; hash: string | undefined }>({ max: LAST_CACHE });

  private constructor(private readonly client: EventStoreDBClient) {}

  /** Connects with a connection string such as `esdb://localhost:2113?tls=false` (default: EVENTSTORE_URL). */
  static connect(url: string | undefined = process.env.EVENTSTORE_URL): EsdbEventStore {
    if (!url) throw new Error("EVENTSTORE_URL is not set (e.g. esdb://localhost:2113?tls=false)");
    return new EsdbEventStore(EventStoreDBClient.connectionString(url));
  }

  /** EventStoreDB has no transaction across streams: the steps go one after another. */
  appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    return appendStepByStep(this, steps);
  }

  async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    if (typeof stream !== "string" || stream.length === 0 || stream.startsWith("$")) {
      throw new TypeError(`not an application stream name: ${JSON.stringify(stream)}`);
    }
    if (events.length === 0) return this.checkOnly(stream, expectedRevision);
    const seen = new Set<string>();
    for (const e of events) {
      if (seen.has(e.id)) throw new DuplicateEventIdError(e.id, stream);
      seen.add(e.id);
    }
    const texts = events.map((e) => contentText(stream, e));
    const versions = events.map(versionOf);
    const exact = typeof expectedRevision === "number" || expectedRevision === "no_stream";
    if (!exact) {
      const retry = await this.findRetry(stream, events);
      if (retry) return retry;
    }
    for (let attempt = 1; ; attempt++) {
      const prev = await this.lastOf(stream, expectedRevision);
      if (expectedRevision === "stream_exists" && !prev) throw new WrongExpectedRevisionError(stream, expectedRevision, "no_stream");
      const firstRevision = prev ? prev.revision + 1 : 0;
      const hashes = chainHashes(prev?.hash, firstRevision, texts, versions);
      const payload = events.map((e, i) => toProposed(e, hashes[i]!, versions[i]!));
      const sent: ExpectedRevision = exact ? expectedRevision : prev ? prev.revision : "no_stream";
      try {
        const r = await this.client.appendToStream(stream, payload, { expectedRevision: toEsdbExpected(sent) });
        const revision = Number(r.nextExpectedRevision);
        // An idempotent retry writes nothing: the hashes computed here are not the stored ones.
        if (revision === firstRevision + events.length - 1) this.remember(stream, revision, hashes.at(-1));
        else this.last.delete(stream);
        // An idempotent retry may come back without a position: read it from the event.
        const position = r.position?.commit ?? (await this.positionOf(stream, revision));
        return { revision, position };
      } catch (err) {
        if (!(err instanceof WrongExpectedVersionError)) throw err;
        this.last.delete(stream);
        if (!exact && attempt < ANY_ATTEMPTS) continue;
        const actual = err.actualVersion === NO_STREAM ? "no_stream" : Number(err.actualVersion);
        throw new WrongExpectedRevisionError(stream, expectedRevision, actual);
      }
    }
  }

  /** The stream's last revision and hash (undefined: no stream), from the cache when it matches what the caller expects. */
  private async lastOf(stream: string, expected: ExpectedRevision): Promise<{ revision: number; hash: string | undefined } | undefined> {
    if (expected === "no_stream") return undefined;
    const cached = this.last.get(stream);
    if (cached && typeof expected === "number" && cached.revision === expected) return cached;
    const [last] = await this.readStream(stream, { direction: "backwards", maxCount: 1 });
    if (!last) return undefined;
    this.remember(stream, last.revision, last.hash);
    return { revision: last.revision, hash: last.hash };
  }

  private remember(stream: string, revision: number, hash: string | undefined): void {
    this.last.set(stream, { revision, hash });
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

  private async positionOf(stream: string, revision: number): Promise<bigint> {
    const [e] = await this.readStream(stream, { fromRevision: revision, maxCount: 1 });
    if (!e) throw new Error(`append to ${stream} succeeded but revision ${revision} cannot be read`);
    return e.position;
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
    const fromRevision = from === undefined ? (backwards ? END : START) : BigInt(Math.max(from, 0));
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(stream, { direction: backwards ? BACKWARDS : FORWARDS, fromRevision, maxCount: max });
      for await (const resolved of read) {
        if (resolved.event) out.push(toRecorded(resolved.event, resolved.commitPosition));
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (max <= 0) return [];
    const after = options.after;
    const out: RecordedEvent[] = [];
    // The client has no server-side filter for reads of $all: filter here and stop reading (which
    // cancels the call) once enough events matched.
    const read = this.client.readAll({ direction: FORWARDS, fromPosition: fromPosition(after) });
    for await (const resolved of cancelOnExit(read)) {
      const e = ours(resolved, after);
      if (!e || !matchesFilter(e, options.filter)) continue;
      out.push(e);
      if (out.length >= max) break;
    }
    return out;
  }

  async headPosition(): Promise<bigint | undefined> {
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: HEAD_SCAN_LIMIT });
    for await (const resolved of cancelOnExit(read)) {
      const e = ours(resolved, undefined);
      if (e) return e.position;
    }
    return undefined;
  }

  /** No transaction across streams, so no global chain (see the class comment). */
  async readCheckpoints(): Promise<ChainCheckpoint[]> {
    return [];
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
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END });
    for await (const resolved of cancelOnExit(read)) {
      const e = ours(resolved, undefined);
      if (e && e.recordedAt.getTime() <= time.getTime()) return e.position;
    }
    return undefined;
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    const after = options.after;
    const sub = this.client.subscribeToAll({
      fromPosition: fromPosition(after),
      filter: serverFilter(options.filter),
    });
    let closed = false;
    let wake: (() => void) | undefined;
    async function* iterate(): AsyncGenerator<RecordedEvent> {
      const source = sub[Symbol.asyncIterator]();
      while (!closed) {
        // close() wakes a pending wait itself instead of trusting the cancelled gRPC stream to end.
        const next = await new Promise<IteratorResult<AllStreamResolvedEvent>>((resolve, reject) => {
          wake = () => resolve({ done: true, value: undefined });
          source.next().then(resolve, reject);
        });
        wake = undefined;
        if (next.done || closed) break;
        const e = ours(next.value, after);
        if (e && matchesFilter(e, options.filter)) yield e;
      }
    }
    const it = iterate();
    const subscription: Subscription = {
      [Symbol.asyncIterator]: () => it,
      close: async () => {
        if (closed) return;
        closed = true;
        this.subscriptions.delete(subscription);
        wake?.();
        await sub.unsubscribe();
        await it.return(undefined);
        sub.destroy();
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}

import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type Filter,
  type JSONType,
  type ReadPosition,
  type ResolvedEvent,
  type StreamingRead,
} from "@eventstore/db-client";
import { v5 as uuidV5 } from "uuid";
import { checkExpectedRevision } from "./append-check.js";
import { appendStepByStep, DuplicateEventIdError, matchesFilter, WrongExpectedRevisionError } from "./port.js";
import type { AppendResult, AppendStep, EventFilter, EventMetadata, EventStore, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamOptions, RecordedEvent, SequenceResult, SubscribeOptions, Subscription } from "./port.js";

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
 */
const ORIGINAL_ID = "originalEventId";
/** Namespace for name-based event UUIDs (uuid v5 of the caller's id). */
const ID_NAMESPACE = "4d2c7c36-5a27-4b53-8d0c-6e7a3e3f9b21";
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** How far back headPosition looks, past system events, for the newest application event. */
const HEAD_SCAN_LIMIT = 10_000;

type EsdbRecorded = NonNullable<ResolvedEvent["event"]>;

export class EsdbEventStore implements EventStore {
  readonly kind = "esdb" as const;
  private readonly subscriptions = new Set<Subscription>();

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
    const payload = events.map((e) => {
      const id = CANONICAL_UUID.test(e.id) ? e.id : uuidV5(e.id, ID_NAMESPACE);
      const metadata = id === e.id ? e.metadata : { ...e.metadata, [ORIGINAL_ID]: e.id };
      // The client JSON.stringifies data; any JSON value is fine, its type just says objects.
      return jsonEvent({ id, type: e.type, data: e.data as JSONType, metadata });
    });
    try {
      const r = await this.client.appendToStream(stream, payload, { expectedRevision: toEsdbExpected(expectedRevision) });
      const revision = Number(r.nextExpectedRevision);
      // An idempotent retry may come back without a position: read it from the event.
      const position = r.position?.commit ?? (await this.positionOf(stream, revision));
      return { revision, position };
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        const actual = err.actualVersion === NO_STREAM ? "no_stream" : Number(err.actualVersion);
        throw new WrongExpectedRevisionError(stream, expectedRevision, actual);
      }
      throw err;
    }
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

/** Where to start reading for "after this position" (reads include the start; ours() drops it). */
const fromPosition = (after: bigint | undefined): ReadPosition => (after === undefined ? START : { commit: after, prepare: after });

/** Iterates a read of the server, cancelling the gRPC call when the caller stops early. */
async function* cancelOnExit<T>(read: StreamingRead<T>): AsyncGenerator<T> {
  let ended = false;
  try {
    for await (const item of read) yield item;
    ended = true;
  } finally {
    if (!ended) await read.cancel();
  }
}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case "no_stream":
      return NO_STREAM;
    case "stream_exists":
      return STREAM_EXISTS;
    case "any":
      return ANY;
    default:
      return BigInt(expected);
  }
}

/**
 * One filter goes to the server (it takes a single one): stream prefixes when given, else the
 * exact event types as an anchored regex, else "no system events". matchesFilter re-checks all.
 */
function serverFilter(filter: EventFilter | undefined): Filter {
  if (filter?.streamPrefixes) return streamNameFilter({ prefixes: [...filter.streamPrefixes] });
  if (filter?.eventTypes) {
    const alternatives = filter.eventTypes.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    return eventTypeFilter({ regex: `^(?:${alternatives})$` });
  }
  return excludeSystemEvents();
}

/** The application event in a read of $all, or undefined for system events and those at or before `after`. */
function ours(resolved: AllStreamResolvedEvent, after: bigint | undefined): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || e.streamId.startsWith("$") || e.type.startsWith("$")) return undefined;
  if (after !== undefined && e.position.commit <= after) return undefined;
  return toRecorded(e, e.position.commit);
}

function toRecorded(e: EsdbRecorded, commitPosition: bigint | undefined): RecordedEvent {
  const position = e.position?.commit ?? commitPosition;
  // Stream reads carry positions only on servers newer than 22.6.0.
  if (position === undefined) throw new Error(`EventStoreDB returned event ${e.id} without a position (server older than 22.6?)`);
  const raw = (e.metadata ?? {}) as EventMetadata & { [ORIGINAL_ID]?: string };
  const { [ORIGINAL_ID]: originalId, ...metadata } = raw;
  return {
    id: originalId ?? e.id,
    stream: e.streamId,
    revision: Number(e.revision),
    position,
    type: e.type,
    data: e.data,
    metadata: metadata as EventMetadata,
    recordedAt: e.created,
  };
}

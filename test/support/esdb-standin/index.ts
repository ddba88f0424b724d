/**
 * A stand-in for an EventStoreDB server behind @eventstore/db-client 6.2.1's EventStoreDBClient: the
 * calls the adapter makes (src/infra/eventstore/esdb-client.ts), with the server's documented
 * behaviour. No server can run on the machines the tests run on; this is what the adapter is tested
 * against in `npm test`, and test/eventstore/esdb.test.ts runs the same suite on a real server when
 * EVENTSTORE_URL is set. The rules, and where they come from:
 *
 * - Expected revision (the client's typings, types/index.d.ts `ExpectedRevision` and
 *   `AppendExpectedRevision`; "Optimistic concurrency and idempotence", developers.eventstore.com,
 *   clients/dotnet/21.2/appending): a number is the revision the stream's last event must have;
 *   `no_stream`: the stream must not exist; `stream_exists`: it must; `any`: no check. A refusal is
 *   the client's WrongExpectedVersionError with the stream's current revision, or, when the client
 *   was made with throwOnAppendFailure=false, `{ success: false, nextExpectedRevision: current or -1 }`
 *   (the client's streams/appendToStream/append.js).
 * - Idempotence (same page): with an expected revision below the stream's, the appended ids are
 *   compared with the events after that revision: all the same, the append succeeds and writes
 *   nothing; none or some, WrongExpectedVersion. With the revision equal, the events are written
 *   (ids are not checked). With `any` (and `stream_exists` on an existing stream), the first id
 *   decides: unknown in the stream, the events are written; known, all of them must follow it in
 *   order (an idempotent success), else WrongExpectedVersion. The check is within one stream: an id
 *   may be reused in another. An idempotent success answers the original events' last revision and
 *   no position (servers before IdempotentLogPosition leave it out; the adapter must not need it).
 * - Positions (the server's AllReader): an event appended through gRPC is its own implicit
 *   transaction, so its commit and prepare positions are both its record's offset in the log. They
 *   grow with the bytes written, so they are never consecutive, and the server's own records come
 *   first (the first event is not at 0). Reading $all forwards from a position includes the event
 *   there; backwards from it, only the events before it; a position that is not where a record
 *   starts (or the log's end) is answered with an error. A subscription to $all starts strictly
 *   after its position (.NET client's `FromAll.After`).
 * - `$`-streams and `$`-types: the server writes its own events into $all (statistics, settings,
 *   stream metadata in `$$<stream>`); `writeSystemEvent` puts one anywhere in the log.
 * - Tombstones (hard delete, `tombstoneStream`): a `$streamDeleted` event in the stream's own name at
 *   revision long.MaxValue goes to $all; reading or appending to the stream afterwards is the
 *   client's StreamDeletedError. A stream that never existed reads as StreamNotFoundError.
 * - Soft delete (`deleteStream`, with an expected revision checked as an append's) and stream
 *   metadata's truncate-before (`setStreamMetadata` with `truncateBefore`, written as `$metadata` in
 *   `$$<stream>`): reads of the stream and of $all skip the events before the mark at once (a
 *   real server leaves them in $all until a scavenge; the adapter copes with either). A
 *   soft-deleted stream reads as StreamNotFoundError; an append to it goes on at the next revision.
 * - Server-side filters (client's types `Filter`, utils/filter.d.ts): on the stream name or the
 *   event type, by prefixes or by a regex (searched, not anchored, as .NET's Regex.IsMatch); on
 *   reads of $all maxCount counts the events that pass.
 * - Stream reads carry each event's position (servers from 22.6; older ones leave it out).
 * - A subscription is one gRPC call: it ends with an error when the connection drops or the leader
 *   changes, and is not resumed by the client. `dropSubscriptions(error)` does that to every open one;
 *   `loseAll(error)` also fails reads of $all and new subscriptions until `reachAll()`.
 *
 * Every call answers on a later turn of the event loop, as a network call would, so concurrent
 * calls interleave at the server in the order they were made.
 */
import {
  ANY,
  BACKWARDS,
  END,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  UnavailableError,
  UnknownError,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendResult,
  type AppendToStreamOptions,
  type DeleteResult,
  type DeleteStreamOptions,
  type JSONEventData,
  type ReadPosition,
  type ReadStreamOptions,
  type ResolvedEvent,
  type StreamMetadata,
  type StreamingRead,
  type SubscribeToAllOptions,
} from "@eventstore/db-client";
import { randomUUID } from "node:crypto";
import type { EsdbClient, EsdbReadAllOptions } from "../../../src/infra/eventstore/esdb-client.js";
import { StandInLog, wrongExpectedVersion, type StoredEvent } from "./log.js";
import { passes, resolvedFromAll, StandInRead, StandInSubscription, toClientEvent } from "./reads.js";

export interface StandInClientOptions {
  /** As the connection string's setting (default true). */
  throwOnAppendFailure?: boolean;
}

const networkTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One server; `connect()` gives a client of it, as each process of a deployment has its own. */
export class EsdbStandIn {
  readonly log = new StandInLog();
  private readonly listeners = new Set<(events: readonly StoredEvent[]) => void>();
  private readonly subscriptions = new Set<StandInSubscription>();
  private lostAnswers = 0;
  /** Events sent to clients by reads of $all (what a server-side filter saves). */
  sentByReadAll = 0;
  private failures: Error[] = [];
  private allUnreachable: Error | undefined;

  constructor() {
    this.log.onWrite = (events) => {
      for (const l of [...this.listeners]) l(events);
    };
    // What a fresh server has already written before any client appends.
    this.writeSystemEvent("$settings", "$settings", { $userStreamAcl: { $r: "$all" } });
    this.writeSystemEvent("$stats-127.0.0.1:2113", "$statsCollected", { "proc-cpu": 0.5 });
  }

  connect(options: StandInClientOptions = {}): EsdbClient {
    return new StandInClient(this, options.throwOnAppendFailure ?? true);
  }

  writeSystemEvent(stream: string, type: string, data: unknown = {}): void {
    this.log.writeSystem(stream, type, data, randomUUID());
  }

  tombstoneStream(stream: string): void {
    this.log.tombstone(stream, randomUUID());
  }

  /** Ends every open subscription with `error` (a dropped connection, a leader change). */
  dropSubscriptions(error: Error = new UnavailableError(undefined, "the connection to the server was lost")): number {
    const open = [...this.subscriptions];
    for (const s of open) s.destroy(error);
    return open.length;
  }

  /**
   * Ends every open subscription with `error`, and fails reads of $all and new subscriptions with it
   * until `reachAll()` (a follower's connection lost while the service's writes and stream reads go on).
   */
  loseAll(error: Error = new UnavailableError(undefined, "the connection to the server was lost")): void {
    this.allUnreachable = error;
    this.dropSubscriptions(error);
  }

  reachAll(): void {
    this.allUnreachable = undefined;
  }

  /** The next append is written, but its answer is lost: the call fails as a dropped connection. */
  loseNextAnswer(): void {
    this.lostAnswers++;
  }

  /** The next call of any kind fails with `error` before it reaches the log. */
  failNextCall(error: Error): void {
    this.failures.push(error);
  }

  async append(streamName: string, events: JSONEventData[], options: AppendToStreamOptions, throwOnFailure: boolean): Promise<AppendResult> {
    await this.arrive();
    if (this.log.isTombstoned(streamName)) throw StreamDeletedError.fromStreamName(streamName);
    const outcome = this.log.append(streamName, events, options.expectedRevision ?? ANY);
    const lost = this.lostAnswers > 0 && outcome.kind === "written";
    if (lost) this.lostAnswers--;
    await networkTurn();
    if (lost) throw new UnavailableError(undefined, "the connection was lost before the answer came");
    if (outcome.kind === "written") {
      const p = outcome.last.position;
      return { success: true, nextExpectedRevision: outcome.last.revision, position: { commit: p, prepare: p } };
    }
    if (outcome.kind === "idempotent") return { success: true, nextExpectedRevision: outcome.lastRevision };
    if (throwOnFailure) throw wrongExpectedVersion(streamName, outcome.current, outcome.expected);
    return { success: false, nextExpectedRevision: outcome.current === "no_stream" ? -1n : outcome.current, position: undefined };
  }

  readStream(streamName: string, options: ReadStreamOptions = {}): StreamingRead<ResolvedEvent> {
    const failure = this.failures.shift();
    if (failure) return read(failure);
    if (this.log.isTombstoned(streamName)) return read(StreamDeletedError.fromStreamName(streamName));
    const list = this.log.readable(streamName);
    if (!list) return read(new StreamNotFoundError(undefined, streamName));
    const backwards = options.direction === BACKWARDS;
    const from = options.fromRevision ?? (backwards ? END : START);
    const max = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    const ordered = backwards ? [...list].reverse() : list;
    const selected = ordered.filter((e) => from === START || from === END || (backwards ? e.revision <= from : e.revision >= from));
    return read(selected.slice(0, max).map((e) => ({ event: toClientEvent(e, true) }) as ResolvedEvent));
  }

  readAll(options: EsdbReadAllOptions = {}): StreamingRead<AllStreamResolvedEvent> {
    const failure = this.allUnreachable ?? this.failures.shift() ?? this.positionError(options.fromPosition);
    if (failure) return read(failure);
    const backwards = options.direction === BACKWARDS;
    const from = options.fromPosition ?? (backwards ? END : START);
    const max = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    const out: AllStreamResolvedEvent[] = [];
    const all = this.log.all;
    for (let k = 0; k < all.length && out.length < max; k++) {
      const e = all[backwards ? all.length - 1 - k : k]!;
      if (typeof from === "object" && (backwards ? e.position >= from.commit : e.position < from.commit)) continue;
      if (passes(e, options.filter) && this.log.isLive(e)) out.push(resolvedFromAll(e));
    }
    this.sentByReadAll += out.length;
    return read(out);
  }

  async deleteStream(streamName: string, options: DeleteStreamOptions = {}): Promise<DeleteResult> {
    await this.arrive();
    if (this.log.isTombstoned(streamName)) throw StreamDeletedError.fromStreamName(streamName);
    const current = this.log.stream(streamName)?.at(-1)?.revision;
    const expected = options.expectedRevision ?? ANY;
    const holds = expected === ANY || (expected === "no_stream" ? current === undefined : current === expected);
    if (!holds) throw wrongExpectedVersion(streamName, current ?? "no_stream", expected);
    this.log.softDelete(streamName);
    await networkTurn();
    return { position: { commit: this.log.end, prepare: this.log.end } };
  }

  async setStreamMetadata(streamName: string, metadata: StreamMetadata): Promise<AppendResult> {
    await this.arrive();
    if (typeof metadata.truncateBefore !== "number") throw new Error("the stand-in keeps only a numeric truncateBefore of stream metadata");
    const e = this.log.setTruncateBefore(streamName, BigInt(metadata.truncateBefore), randomUUID());
    await networkTurn();
    return { success: true, nextExpectedRevision: e.revision, position: { commit: e.position, prepare: e.position } };
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllStreamSubscription {
    const failure = this.allUnreachable ?? this.failures.shift() ?? this.positionError(options.fromPosition);
    const from = options.fromPosition ?? START;
    const sub = new StandInSubscription((deliver) => {
      if (failure) {
        sub.destroy(failure);
        return () => undefined;
      }
      const after = from === START ? -1n : from === END ? this.log.end - 1n : from.commit;
      const take = (events: readonly StoredEvent[]) => deliver(events.filter((e) => e.position > after && passes(e, options.filter)));
      take(this.log.all);
      this.listeners.add(take);
      return () => this.listeners.delete(take);
    });
    this.subscriptions.add(sub);
    sub.once("close", () => this.subscriptions.delete(sub));
    return sub as unknown as AllStreamSubscription;
  }

  private positionError(position: ReadPosition | undefined): Error | undefined {
    if (typeof position !== "object") return undefined;
    if (position.commit !== position.prepare || !this.log.isBoundary(position.commit)) {
      return new UnknownError(undefined, `Invalid position: ${position.commit}/${position.prepare} is not where a record starts`);
    }
    return undefined;
  }

  private async arrive(): Promise<void> {
    await networkTurn();
    const failure = this.failures.shift();
    if (failure) throw failure;
  }
}

const read = <E>(items: readonly E[] | Error): StreamingRead<E> => new StandInRead<E>(items) as unknown as StreamingRead<E>;

/** One client's view of the server: its own setting, and dispose() ends only its subscriptions. */
class StandInClient implements EsdbClient {
  private readonly mine = new Set<AllStreamSubscription>();
  private disposed = false;

  constructor(
    private readonly server: EsdbStandIn,
    private readonly throwOnAppendFailure: boolean,
  ) {}

  appendToStream(streamName: string, events: JSONEventData[], options: AppendToStreamOptions = {}): Promise<AppendResult> {
    this.check();
    return this.server.append(streamName, events, options, this.throwOnAppendFailure);
  }

  readStream(streamName: string, options?: ReadStreamOptions): StreamingRead<ResolvedEvent> {
    this.check();
    return this.server.readStream(streamName, options);
  }

  readAll(options?: EsdbReadAllOptions): StreamingRead<AllStreamResolvedEvent> {
    this.check();
    return this.server.readAll(options);
  }

  subscribeToAll(options?: SubscribeToAllOptions): AllStreamSubscription {
    this.check();
    const sub = this.server.subscribeToAll(options);
    this.mine.add(sub);
    sub.once("close", () => this.mine.delete(sub));
    return sub;
  }

  deleteStream(streamName: string, options?: DeleteStreamOptions): Promise<DeleteResult> {
    this.check();
    return this.server.deleteStream(streamName, options);
  }

  setStreamMetadata(streamName: string, metadata: StreamMetadata): Promise<AppendResult> {
    this.check();
    return this.server.setStreamMetadata(streamName, metadata);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.mine].map((s) => s.unsubscribe()));
  }

  private check(): void {
    if (this.disposed) throw new Error("the client was disposed");
  }
}

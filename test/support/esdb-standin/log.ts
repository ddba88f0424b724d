/**
 * The stand-in's transaction log: streams, $all, positions and the append rules. See index.ts for
 * the documented behaviour it follows and where each rule comes from.
 */
import { WrongExpectedVersionError, type AppendExpectedRevision, type CurrentRevision, type JSONEventData } from "@eventstore/db-client";

/** An event as the server keeps it (data and metadata as the JSON text that travelled). */
export interface StoredEvent {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  data: string;
  metadata: string | undefined;
  created: Date;
  /** Its log position: commit and prepare are the same for an implicit (gRPC) transaction. */
  position: bigint;
}

/** The revision of a tombstone event (EventNumber.DeletedStream, long.MaxValue). */
export const TOMBSTONE_REVISION = 2n ** 63n - 1n;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Bytes a record takes besides its data and metadata (positions are byte offsets, never consecutive). */
const RECORD_OVERHEAD = 87n;

export type AppendOutcome =
  | { kind: "written"; last: StoredEvent }
  | { kind: "idempotent"; lastRevision: bigint }
  | { kind: "wrong"; current: CurrentRevision; expected: AppendExpectedRevision };

export class StandInLog {
  readonly all: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly tombstoned = new Set<string>();
  /** stream -> the first revision reads return: `$tb` from its metadata, or past its last event once soft-deleted. */
  private readonly truncated = new Map<string, bigint>();
  /** Where the next record starts. The server writes its own records first: never 0. */
  private next = 1_024n;
  /** Called after every write, with what it wrote. */
  onWrite: (events: readonly StoredEvent[]) => void = () => undefined;

  stream(name: string): StoredEvent[] | undefined {
    return this.streams.get(name);
  }

  /** The stream's events that reads return (those before its `$tb` or a soft delete are skipped). */
  readable(name: string): StoredEvent[] | undefined {
    const list = this.streams.get(name);
    const tb = this.truncated.get(name);
    if (!list || tb === undefined) return list;
    const live = list.filter((e) => e.revision >= tb);
    // A soft-deleted stream reads as one that does not exist, until it is appended to again.
    return live.length === 0 && tb > list.at(-1)!.revision ? undefined : live;
  }

  /** Whether reads of $all return this event (not truncated away nor soft-deleted). */
  isLive(e: StoredEvent): boolean {
    const tb = this.truncated.get(e.streamId);
    return tb === undefined || e.revision >= tb;
  }

  /** Soft delete: the stream reads as not found; appended to again, it goes on at the next revision. */
  softDelete(streamId: string): void {
    const list = this.streams.get(streamId);
    if (list) this.truncated.set(streamId, list.at(-1)!.revision + 1n);
  }

  /** Stream metadata's `$tb`: written as a `$metadata` event of `$$<stream>`; reads skip the revisions before it. */
  setTruncateBefore(streamId: string, revision: bigint, id: string): StoredEvent {
    this.truncated.set(streamId, revision);
    return this.writeSystem(`$$${streamId}`, "$metadata", { $tb: Number(revision) }, id);
  }

  isTombstoned(name: string): boolean {
    return this.tombstoned.has(name);
  }

  /** Where the log ends (the position a record written now would get). */
  get end(): bigint {
    return this.next;
  }

  /** Whether a read may start here: the log's start, an event's position, or the end of the log. */
  isBoundary(position: bigint): boolean {
    if (position === 0n || position === this.next) return true;
    let lo = 0;
    let hi = this.all.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.all[mid]!.position < position) lo = mid + 1;
      else hi = mid;
    }
    return this.all[lo]?.position === position;
  }

  append(streamName: string, events: readonly JSONEventData[], expected: AppendExpectedRevision): AppendOutcome {
    for (const e of events) if (!UUID.test(e.id)) throw new TypeError(`event id ${e.id} is not a UUID`);
    const list = this.streams.get(streamName);
    const current = list ? list.at(-1)!.revision : -1n;
    const currentRevision: CurrentRevision = list ? current : "no_stream";
    const ids = events.map((e) => e.id.toLowerCase());
    const wrong = { kind: "wrong", current: currentRevision, expected } as const;
    if (expected === "stream_exists" && !list) return wrong;
    if (expected === "any" || expected === "stream_exists") {
      const retry = this.anyRetry(list ?? [], ids);
      if (retry !== undefined) return retry;
    } else {
      const exp = expected === "no_stream" ? -1n : expected;
      if (exp > current) return wrong;
      if (exp < current) return this.exactRetry(list ?? [], ids, exp) ?? wrong;
    }
    return this.write(streamName, events, ids);
  }

  /** Idempotence with "any": the first id decides; all of them must be the stream's, in order. */
  private anyRetry(list: readonly StoredEvent[], ids: readonly string[]): AppendOutcome | undefined {
    if (ids.length === 0) return undefined;
    const first = list.findIndex((e) => e.id === ids[0]);
    if (first < 0) return undefined;
    const run = list.slice(first, first + ids.length);
    if (run.length === ids.length && run.every((e, i) => e.id === ids[i])) return { kind: "idempotent", lastRevision: run.at(-1)!.revision };
    return { kind: "wrong", current: list.at(-1)!.revision, expected: "any" };
  }

  /** Idempotence with an expected revision behind the stream: the events after it must be these. */
  private exactRetry(list: readonly StoredEvent[], ids: readonly string[], expected: bigint): AppendOutcome | undefined {
    if (ids.length === 0) return undefined;
    const from = Number(expected + 1n);
    const run = list.slice(from, from + ids.length);
    if (run.length === ids.length && run.every((e, i) => e.id === ids[i])) return { kind: "idempotent", lastRevision: run.at(-1)!.revision };
    return undefined;
  }

  private write(streamName: string, events: readonly JSONEventData[], ids: readonly string[]): AppendOutcome {
    const list = this.streams.get(streamName) ?? [];
    if (events.length === 0) return { kind: "idempotent", lastRevision: list.at(-1)?.revision ?? -1n };
    const created = new Date();
    const written: StoredEvent[] = events.map((e, i) => this.record(streamName, BigInt(list.length + i), e.type, JSON.stringify(e.data), e.metadata === undefined ? undefined : JSON.stringify(e.metadata), ids[i]!, created));
    list.push(...written);
    this.streams.set(streamName, list);
    this.all.push(...written);
    this.onWrite(written);
    return { kind: "written", last: written.at(-1)! };
  }

  private record(streamId: string, revision: bigint, type: string, data: string, metadata: string | undefined, id: string, created: Date): StoredEvent {
    const position = this.next;
    this.next += RECORD_OVERHEAD + BigInt(Buffer.byteLength(data) + Buffer.byteLength(metadata ?? "") + Buffer.byteLength(streamId) + Buffer.byteLength(type));
    return { streamId, id, revision, type, data, metadata, created, position };
  }

  /** A record the server writes itself (statistics, settings, stream metadata): in $all, never in a stream's reads by the adapter. */
  writeSystem(streamId: string, type: string, data: unknown, id: string): StoredEvent {
    const list = this.streams.get(streamId) ?? [];
    const e = this.record(streamId, BigInt(list.length), type, JSON.stringify(data), undefined, id, new Date());
    list.push(e);
    this.streams.set(streamId, list);
    this.all.push(e);
    this.onWrite([e]);
    return e;
  }

  /** Tampering with the server's files: the event is gone from its stream and from $all, and nothing records it. */
  cut(streamId: string, revision: bigint): void {
    const list = this.streams.get(streamId) ?? [];
    const e = list.find((x) => x.revision === revision);
    if (!e) throw new Error(`${streamId} has no revision ${revision}`);
    list.splice(list.indexOf(e), 1);
    this.all.splice(this.all.indexOf(e), 1);
  }

  /** Hard delete: a `$streamDeleted` event at revision long.MaxValue; the stream is gone for good. */
  tombstone(streamId: string, id: string): StoredEvent {
    const e = this.record(streamId, TOMBSTONE_REVISION, "$streamDeleted", "{}", undefined, id, new Date());
    this.tombstoned.add(streamId);
    this.streams.delete(streamId);
    this.all.push(e);
    this.onWrite([e]);
    return e;
  }
}

/** The client's error for a refused append, as its append.js builds it. */
export const wrongExpectedVersion = (streamName: string, current: CurrentRevision, expected: AppendExpectedRevision) =>
  new WrongExpectedVersionError(undefined, { streamName, current, expected });

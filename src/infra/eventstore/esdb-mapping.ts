/** How esdb.ts maps between EventStoreDB's client and the port: positions, filters, events sent and recorded. */
import {
  ANY,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type Filter,
  type JSONEventData,
  type JSONType,
  type ReadPosition,
  type ResolvedEvent,
  type StreamingRead,
} from "@eventstore/db-client";
import { v5 as uuidV5 } from "uuid";
import type { EventFilter, EventMetadata, ExpectedRevision, NewEvent, RecordedEvent } from "./port.js";

/** Metadata keys the adapter adds: the caller's own event id (when not a UUID), the chain hash and its version (when not 1). */
export const ORIGINAL_ID = "originalEventId";
export const CHAIN_HASH = "chainHash";
export const CHAIN_VERSION_KEY = "chainVersion";

/** Namespace for name-based event UUIDs (uuid v5 of the caller's id). */
const ID_NAMESPACE = "4d2c7c36-5a27-4b53-8d0c-6e7a3e3f9b21";
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type EsdbRecorded = NonNullable<ResolvedEvent["event"]>;

/** Where to start reading for "after this position" (reads include the start; ours() drops it). */
export const fromPosition = (after: bigint | undefined): ReadPosition => (after === undefined ? START : { commit: after, prepare: after });

/** Iterates a read of the server, cancelling the gRPC call when the caller stops early. */
export async function* cancelOnExit<T>(read: StreamingRead<T>): AsyncGenerator<T> {
  let ended = false;
  try {
    for await (const item of read) yield item;
    ended = true;
  } finally {
    if (!ended) await read.cancel();
  }
}

export function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
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
export function serverFilter(filter: EventFilter | undefined): Filter {
  if (filter?.streamPrefixes) return streamNameFilter({ prefixes: [...filter.streamPrefixes] });
  if (filter?.eventTypes) {
    const alternatives = filter.eventTypes.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    return eventTypeFilter({ regex: `^(?:${alternatives})$` });
  }
  return excludeSystemEvents();
}

/** The application event in a read of $all, or undefined for system events and those at or before `after`. */
export function ours(resolved: AllStreamResolvedEvent, after: bigint | undefined): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || e.streamId.startsWith("$") || e.type.startsWith("$")) return undefined;
  if (after !== undefined && e.position.commit <= after) return undefined;
  return toRecorded(e, e.position.commit);
}

/**
 * The event as it is sent: a lower-case canonical UUID id is kept, any other id is sent as a
 * name-based UUID with the original in metadata; the chain hash (and its version when not 1) too.
 */
export function toProposed(e: NewEvent, hash: string, chainVersion: number): JSONEventData {
  const id = CANONICAL_UUID.test(e.id) ? e.id : uuidV5(e.id, ID_NAMESPACE);
  const version = chainVersion === 1 ? {} : { [CHAIN_VERSION_KEY]: chainVersion };
  const metadata = { ...e.metadata, [CHAIN_HASH]: hash, ...version, ...(id === e.id ? {} : { [ORIGINAL_ID]: e.id }) };
  // The client JSON.stringifies data; any JSON value is fine, its type just says objects.
  return jsonEvent({ id, type: e.type, data: e.data as JSONType, metadata });
}

export function toRecorded(e: EsdbRecorded, commitPosition: bigint | undefined): RecordedEvent {
  const position = e.position?.commit ?? commitPosition;
  // Stream reads carry positions only on servers newer than 22.6.0.
  if (position === undefined) throw new Error(`EventStoreDB returned event ${e.id} without a position (server older than 22.6?)`);
  const raw = (e.metadata ?? {}) as EventMetadata & { [ORIGINAL_ID]?: string; [CHAIN_HASH]?: string; [CHAIN_VERSION_KEY]?: number };
  const { [ORIGINAL_ID]: originalId, [CHAIN_HASH]: hash, [CHAIN_VERSION_KEY]: chainVersion, ...metadata } = raw;
  return {
    id: originalId ?? e.id,
    stream: e.streamId,
    revision: Number(e.revision),
    position,
    type: e.type,
    data: e.data,
    metadata: metadata as EventMetadata,
    recordedAt: e.created,
    hash,
    chainVersion,
  };
}

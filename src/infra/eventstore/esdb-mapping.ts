/** How esdb.ts maps between EventStoreDB's client and the port: names, positions, filters, events sent and recorded. */
import {
  ANY,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  eventTypeFilter,
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

/** What starts the names of namespaced streams (a name of the default namespace never does). */
const NAMESPACE_MARK = "@";
const NAMESPACE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * The stream-name prefix of a namespace (EVENTSTORE_NAMESPACE): `@<namespace>/`, or "" for the
 * default namespace, whose streams are named as the application names them.
 */
export function namespacePrefix(namespace: string | undefined): string {
  if (!namespace) return "";
  if (!NAMESPACE_RE.test(namespace)) {
    throw new Error(`EVENTSTORE_NAMESPACE ${JSON.stringify(namespace)}: use 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`);
  }
  return `${NAMESPACE_MARK}${namespace}/`;
}

/** Whether the server's stream name is one of the namespace's (never a system stream, never another namespace's). */
export function inNamespace(streamId: string, prefix: string): boolean {
  if (prefix) return streamId.startsWith(prefix);
  return !streamId.startsWith("$") && !streamId.startsWith(NAMESPACE_MARK);
}

/** Refuses names the adapter would not read back as the application's: system and namespace marks. */
export function checkStreamName(stream: string): void {
  if (typeof stream !== "string" || stream.length === 0 || stream.startsWith("$") || stream.startsWith(NAMESPACE_MARK)) {
    throw new TypeError(`not an application stream name: ${JSON.stringify(stream)}`);
  }
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * One filter goes to the server (it takes a single one): the exact event types as an anchored
 * regex when given (the most selective), else stream prefixes (within the namespace), else the
 * namespace itself: its prefix, or, for the default namespace, every stream that is neither a
 * system stream nor another namespace's. `ours` and matchesFilter re-check everything.
 */
export function serverFilter(filter: EventFilter | undefined, prefix = ""): Filter {
  if (filter?.eventTypes) return eventTypeFilter({ regex: `^(?:${filter.eventTypes.map(escapeRegex).join("|")})$` });
  if (filter?.streamPrefixes) return streamNameFilter({ prefixes: filter.streamPrefixes.map((p) => prefix + p) });
  if (prefix) return streamNameFilter({ prefixes: [prefix] });
  return streamNameFilter({ regex: `^[^$${NAMESPACE_MARK}]` });
}

/**
 * The application event in a read of $all, or undefined for system events, other namespaces'
 * streams and those at or before `after`.
 */
export function ours(resolved: AllStreamResolvedEvent, after: bigint | undefined, prefix = ""): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || !inNamespace(e.streamId, prefix) || e.type.startsWith("$")) return undefined;
  if (after !== undefined && e.position.commit <= after) return undefined;
  return toRecorded(e, e.position.commit, prefix);
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

/** The event as the port gives it; `prefix` (the namespace's) is taken off its stream's name. */
export function toRecorded(e: EsdbRecorded, commitPosition: bigint | undefined, prefix = ""): RecordedEvent {
  const position = e.position?.commit ?? commitPosition;
  // Stream reads carry positions only on servers newer than 22.6.0.
  if (position === undefined) throw new Error(`EventStoreDB returned event ${e.id} without a position (server older than 22.6?)`);
  const raw = (e.metadata ?? {}) as EventMetadata & { [ORIGINAL_ID]?: string; [CHAIN_HASH]?: string; [CHAIN_VERSION_KEY]?: number };
  const { [ORIGINAL_ID]: originalId, [CHAIN_HASH]: hash, [CHAIN_VERSION_KEY]: chainVersion, ...metadata } = raw;
  return {
    id: originalId ?? e.id,
    stream: e.streamId.slice(prefix.length),
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

/**
 * audit: the index behind history(uuid) and trace(correlationId). It holds references into the
 * log, not the events: history reads the events from the event store (src/audit/history.ts).
 *
 * Keys (all under the hash tag `{audit}`):
 *   :object:<uuid>            zset  entries of the events that name the object (objects.ts), but
 *                                   those in its own stream (arq-<uuid>, instance-<uuid>, ...)
 *   :parts:<uuid>             zset  a device's deployables and handles, a deployable's handles,
 *                                   by the position that added them (never removed: history stays)
 *   :request:<correlationId>  zset  entries of every event one request caused
 * An entry is the member "<position> <revision> <stream>", scored by its position.
 */
import { createHash } from "node:crypto";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import type { Write } from "../../src/infra/readstore/port.js";
import { keys, score } from "../shared/keys.js";
import { OBJECTS, objectsOf, partsOf } from "./objects.js";

export const name = "audit";
export const k = keys(name);

export const eventTypes = Object.keys(OBJECTS);

/**
 * The id part of a key: an id longer than MAX_ID is filed under its SHA-256, so that every key
 * fits every store (an LMDB key holds about 1.9 KB). The API keeps ids and correlation ids short
 * (uuids; X-Correlation-Id at most 128 characters): only an imported log can hold such an id.
 */
const MAX_ID = 256;
const idPart = (id: string): string => (id.length <= MAX_ID ? id : `sha256:${createHash("sha256").update(id).digest("hex")}`);

/** The keys of an object's entries, of its parts, and of a request's entries. */
export const objectKey = (id: string): string => k("object", idPart(id));
export const partsKey = (id: string): string => k("parts", idPart(id));
export const requestKey = (correlationId: string): string => k("request", idPart(correlationId));

/** An index entry: where an event is in the log and in its stream. */
export const entry = (e: Pick<RecordedEvent, "position" | "revision" | "stream">): string => `${e.position} ${e.revision} ${e.stream}`;

export function project(e: RecordedEvent): Write[] {
  const member = entry(e);
  const at = score(e.position);
  const writes: Write[] = [];
  const request = e.metadata.correlationId;
  if (typeof request === "string" && request.length > 0) writes.push({ op: "zadd", key: requestKey(request), member, score: at });
  for (const id of objectsOf(e)) writes.push({ op: "zadd", key: objectKey(id), member, score: at });
  for (const [whole, part] of partsOf(e)) writes.push({ op: "zadd", key: partsKey(whole), member: part, score: at, nx: true });
  return writes;
}

export const projection: Projection = { name, eventTypes, project };

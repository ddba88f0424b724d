/**
 * The log as NDJSON, one event a line, with everything the store keeps of it:
 *   {"position":"12","stream":"arq-…","revision":0,"id":"…","type":"ArqCreated","data":{…},
 *    "metadata":{"principal":"nova","roles":["service"],"correlationId":"…",…},
 *    "recordedAt":"2026-11-24T14:03:00.123Z","hash":"…","chainVersion":2}
 * (`chainVersion`: the definition the hash follows, chain.ts; absent for version 1.)
 * Export reads the log a page at a time and waits for the output to drain (bounded memory);
 * import appends the lines to another store at their stream revisions, a transaction per page,
 * and checks every hash chain on the way (a changed line is refused, at its line).
 */
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { LRUCache } from "lru-cache";
import { eventHash, GENESIS } from "../infra/eventstore/chain.js";
import { positionFromString, type AppendStep, type EventFilter, type EventStore, type RecordedEvent } from "../infra/eventstore/port.js";

export interface ExportedEvent {
  position: string;
  stream: string;
  revision: number;
  id: string;
  type: string;
  data: unknown;
  metadata: RecordedEvent["metadata"];
  recordedAt: string;
  hash: string | null;
  chainVersion?: number;
}

export interface ExportOptions {
  /** Events strictly after this position. */
  after?: bigint;
  /** Events up to this position (inclusive; default: the head when the export starts). */
  until?: bigint;
  filter?: EventFilter;
  pageSize?: number;
  onProgress?: (p: { position: bigint; until: bigint; events: number }) => void;
}

export const toLine = (e: RecordedEvent): string =>
  JSON.stringify({
    position: e.position.toString(),
    stream: e.stream,
    revision: e.revision,
    id: e.id,
    type: e.type,
    data: e.data,
    metadata: e.metadata,
    recordedAt: e.recordedAt.toISOString(),
    hash: e.hash ?? null,
    chainVersion: e.chainVersion,
  } satisfies ExportedEvent);

export function fromLine(line: string): RecordedEvent {
  const x = JSON.parse(line) as ExportedEvent;
  return {
    position: positionFromString(x.position),
    stream: x.stream,
    revision: x.revision,
    id: x.id,
    type: x.type,
    data: x.data,
    metadata: x.metadata,
    recordedAt: new Date(x.recordedAt),
    ...(x.hash ? { hash: x.hash } : {}),
    ...(x.chainVersion !== undefined ? { chainVersion: x.chainVersion } : {}),
  };
}

/** Writes the events as NDJSON; returns how many and the last position written. */
export async function exportLog(store: EventStore, out: Writable, options: ExportOptions = {}): Promise<{ events: number; last: bigint | undefined }> {
  const until = options.until ?? (await store.headPosition());
  const pageSize = options.pageSize ?? 2000;
  let after = options.after;
  let events = 0;
  let last: bigint | undefined;
  while (until !== undefined && (after === undefined || after < until)) {
    // Unfiltered pages, so `after` moves on even through a long run of events the filter drops.
    const page = await store.readAll({ after, maxCount: pageSize });
    if (page.length === 0) break;
    let chunk = "";
    for (const e of page) {
      if (e.position > until) break;
      if (!matches(e, options.filter)) continue;
      chunk += toLine(e) + "\n";
      events++;
      last = e.position;
    }
    after = page.at(-1)!.position;
    if (chunk && !out.write(chunk)) await once(out, "drain");
    options.onProgress?.({ position: after < until ? after : until, until, events });
    if (page.length < pageSize) break;
  }
  return { events, last };
}

function matches(e: RecordedEvent, filter: EventFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.eventTypes && !filter.eventTypes.includes(e.type)) return false;
  return !filter.streamPrefixes || filter.streamPrefixes.some((p) => e.stream.startsWith(p));
}

/** The events of an NDJSON export, one at a time. */
export async function* readExport(input: Readable): AsyncGenerator<RecordedEvent> {
  let n = 0;
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    n++;
    if (line.trim() === "") continue;
    try {
      yield fromLine(line);
    } catch (err) {
      throw new Error(`line ${n} is not an exported event: ${(err as Error).message}`);
    }
  }
}

/** Streams whose last hash import keeps in memory. */
const STREAM_CACHE = 100_000;

export class ImportError extends Error {
  override name = "ImportError";
}

/**
 * Appends an export to `store`, each event at its revision (whole streams: an export made with
 * --type or --stream-prefix cuts streams and cannot be imported), a transaction of up to
 * `batch` events at a time. The hashes are checked as the events go: the store recomputes the
 * same chain, so an imported log verifies exactly as the exported one did.
 */
export async function importLog(
  store: EventStore,
  events: AsyncIterable<RecordedEvent>,
  options: { batch?: number; onProgress?: (imported: number) => void } = {},
): Promise<{ events: number }> {
  const batch = options.batch ?? 1000;
  /** The last hash of recently seen streams; another one is read back from the store, which has it by then. */
  const last = new LRUCache<string, string>({ max: STREAM_CACHE });
  const remember = (stream: string, hash: string | undefined) => {
    if (hash === undefined) last.delete(stream);
    else last.set(stream, hash);
  };
  const previous = async (e: RecordedEvent): Promise<string> => {
    if (e.revision === 0) return GENESIS;
    const known = last.get(e.stream);
    if (known !== undefined) return known;
    const [p] = await store.readStream(e.stream, { fromRevision: e.revision - 1, maxCount: 1 });
    if (!p) {
      throw new ImportError(
        `event ${e.id} (${e.stream}@${e.revision}, position ${e.position}): revision ${e.revision - 1} of its stream is neither in the file nor in the store: ` +
          "import needs whole streams (an export made with --since, --stream-prefix or --type cuts them; export the whole log, or with --until only)",
      );
    }
    return p.hash ?? GENESIS;
  };
  let steps: AppendStep[] = [];
  let pending = 0;
  let imported = 0;
  const flush = async () => {
    if (steps.length === 0) return;
    const r = await store.appendSequence(steps);
    if (r.refusal) {
      const step = steps[r.appended.length]!;
      throw new ImportError(`stream ${step.stream} cannot take revision ${Number(step.expectedRevision === "no_stream" ? -1 : step.expectedRevision) + 1}: ${r.refusal.message} (import needs whole streams, into a store that does not have them yet)`);
    }
    imported += pending;
    options.onProgress?.(imported);
    steps = [];
    pending = 0;
  };
  for await (const e of events) {
    if (e.hash !== undefined) {
      // A stream not seen lately: its previous event is in the store, unless still in this batch.
      if (e.revision > 0 && !last.has(e.stream) && steps.some((st) => st.stream === e.stream)) await flush();
      const expected = eventHash(await previous(e), e);
      if (expected !== e.hash) throw new ImportError(`event ${e.id} (${e.stream}@${e.revision}, position ${e.position}) does not match its hash: the export was changed`);
    }
    // An event written before the chain has none: the next one links to GENESIS, as in the store.
    remember(e.stream, e.hash);
    // A hashed event keeps its chain version, so the store recomputes the same hash.
    const event = { id: e.id, type: e.type, data: e.data, metadata: e.metadata, chainVersion: e.hash === undefined ? undefined : (e.chainVersion ?? 1) };
    const tail = steps.at(-1);
    if (tail && tail.stream === e.stream) (tail.events as unknown[]).push(event);
    else steps.push({ stream: e.stream, events: [event], expectedRevision: e.revision === 0 ? "no_stream" : e.revision - 1 });
    if (++pending >= batch) await flush();
  }
  await flush();
  return { events: imported };
}

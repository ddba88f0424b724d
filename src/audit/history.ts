/**
 * Causal history: `history(uuid)` is every event that named an object (a device with its
 * deployables and handles), merged across the streams it lived in, in log order; `trace(id)` is
 * every event one request caused (its correlation id: the request, and the binder's steps that
 * answered it). The audit read model says where the events are; they are read from the log, so
 * each entry shows what the log holds, with who, when, why and a line a person can read.
 */
import { OWN_STREAMS } from "../../projections/audit/objects.js";
import { objectHistory, requestTrace, type LogRef } from "../../projections/audit/queries.js";
import type { Page } from "../../projections/shared/page.js";
import { aggregates } from "../app/streams.js";
import type { EventStore, RecordedEvent } from "../infra/eventstore/port.js";
import type { ReadStore } from "../infra/readstore/port.js";
import { archivedObjectRefs, archivedRequestRefs, withArchived } from "./retention/archived-refs.js";
import { ArchiveReadingStore } from "./retention/archived-log.js";
import { summarize } from "./summary.js";
import { timeTravelFor } from "./time-travel.js";

export interface HistoryEntry {
  position: string;
  stream: string;
  revision: number;
  eventId: string;
  type: string;
  /** When the store recorded it. */
  recordedAt: Date;
  /** When the command was issued (metadata.at). */
  at: string | null;
  principal: string;
  roles: string[] | null;
  correlationId: string;
  causationId: string;
  /** The project of the request it belongs to (null for events written without one). */
  project: string | null;
  /** "ARQ … bound to instance … on compute1 (…) by nova (service)". */
  summary: string;
  /** The notification this event made the service send, if any (accelerator-request-bound). */
  notification: string | null;
  data: unknown;
  hash: string | null;
}

/** The object's events: those the audit read model indexed, and those of its own streams (objects.ts). */
export async function history(store: EventStore, readStore: ReadStore, uuid: string, first: number, after?: bigint): Promise<Page<HistoryEntry>> {
  const [live, ...owned] = await Promise.all([objectHistory(readStore, uuid, first, after), ...OWN_STREAMS.map((own) => store.readStream(own(uuid)))]);
  const page = store instanceof ArchiveReadingStore ? withArchived(live!, await archivedObjectRefs(readStore, store.archive, uuid), first, after) : live;
  const own = owned.flat();
  const later = own.filter((e) => after === undefined || e.position > after);
  // Each source gave its first `first` after the cursor: the merged page's first `first` are right.
  const merged = [...(await readRefs(store, page!.refs)), ...later.slice(0, first)].sort((a, b) => (a.position < b.position ? -1 : 1));
  return entries(store, merged.slice(0, first), page!.hasNextPage || merged.length > first, page!.totalCount + own.length);
}

/** The project of the request an event belongs to, as its metadata records it. */
const projectOf = (e: RecordedEvent): string | null => (typeof e.metadata.project === "string" ? e.metadata.project : null);

/** Pages of the index read at most for one page of a trace whose correlation id other projects used too. */
const MAX_TRACE_PAGES = 20;

/**
 * Everything one request caused. A correlation id is a caller's to choose, so two projects may
 * send the same one: a trace is one project's (`project`, by default the project that used the id
 * first), and never mixes another project's events in. `totalCount` counts the id's entries in
 * every project.
 */
export async function trace(store: EventStore, readStore: ReadStore, correlationId: string, first: number, after?: bigint, project?: string | null): Promise<Page<HistoryEntry>> {
  const wanted = project !== undefined ? project : await firstProject(store, readStore, correlationId);
  const kept: RecordedEvent[] = [];
  const archived = store instanceof ArchiveReadingStore ? await archivedRequestRefs(store.archive, correlationId) : [];
  const pageAfter = async (p: bigint | undefined) => withArchived(await requestTrace(readStore, correlationId, first, p), archived, first, p);
  let page = await pageAfter(after);
  for (let pages = 1; ; pages++) {
    for (const e of await readRefs(store, page.refs)) if (projectOf(e) === wanted) kept.push(e);
    const last = page.refs.at(-1);
    if (kept.length > first || !page.hasNextPage || last === undefined || pages === MAX_TRACE_PAGES) break;
    page = await pageAfter(last.position);
  }
  return entries(store, kept.slice(0, first), page.hasNextPage || kept.length > first, page.totalCount);
}

async function firstProject(store: EventStore, readStore: ReadStore, correlationId: string): Promise<string | null> {
  const archived = store instanceof ArchiveReadingStore ? await archivedRequestRefs(store.archive, correlationId) : [];
  const [event] = await readRefs(store, withArchived(await requestTrace(readStore, correlationId, 1), archived, 1, undefined).refs);
  return event ? projectOf(event) : null;
}

async function entries(store: EventStore, events: readonly RecordedEvent[], hasNextPage: boolean, totalCount: number): Promise<Page<HistoryEntry>> {
  const items = await Promise.all(events.map((e) => entry(store, e)));
  return { items, cursors: items.map((i) => i.position), hasNextPage, totalCount };
}

/** The events the references point at, in their order: one read per run of consecutive revisions of a stream. */
async function readRefs(store: EventStore, refs: readonly LogRef[]): Promise<RecordedEvent[]> {
  const byStream = new Map<string, LogRef[]>();
  for (const r of refs) byStream.set(r.stream, [...(byStream.get(r.stream) ?? []), r]);
  const found = new Map<bigint, RecordedEvent>();
  await Promise.all(
    [...byStream].map(async ([stream, list]) => {
      list.sort((a, b) => a.revision - b.revision);
      for (let i = 0; i < list.length; ) {
        let j = i + 1;
        while (j < list.length && list[j]!.revision === list[j - 1]!.revision + 1) j++;
        const events = await store.readStream(stream, { fromRevision: list[i]!.revision, maxCount: j - i });
        for (const e of events) found.set(e.position, e);
        i = j;
      }
    }),
  );
  return refs.map((r) => found.get(r.position)).filter((e) => e !== undefined);
}

async function entry(store: EventStore, e: RecordedEvent): Promise<HistoryEntry> {
  const m = e.metadata;
  return {
    position: e.position.toString(),
    stream: e.stream,
    revision: e.revision,
    eventId: e.id,
    type: e.type,
    recordedAt: e.recordedAt,
    at: typeof m.at === "string" ? m.at : null,
    principal: String(m.principal),
    roles: Array.isArray(m.roles) ? m.roles.map(String) : null,
    correlationId: String(m.correlationId),
    causationId: String(m.causationId),
    project: projectOf(e),
    summary: summarize(e),
    notification: await notification(store, e),
    data: e.data,
    hash: e.hash ?? null,
  };
}

/**
 * accelerator-request-bound, as the service publishes it (projections/arqs/bound-notifier.ts):
 * once per bind, when an ARQ in BIND_STARTED becomes BOUND or BIND_FAILED.
 */
async function notification(store: EventStore, e: RecordedEvent): Promise<string | null> {
  const d = e.data as { arqUuid: string; instanceUuid: string | null; reason?: string };
  if (e.type === "ArqBound") return `accelerator-request-bound COMPLETED for instance ${d.instanceUuid} (tag ${d.arqUuid})`;
  if (e.type !== "ArqBindFailed") return null;
  const before = await timeTravelFor(store).fold(aggregates.arq, d.arqUuid, e.position - 1n);
  if (before.state.status !== "live" || before.state.arq.state !== "BIND_STARTED") return null;
  return `accelerator-request-bound FAILED for instance ${before.state.arq.instanceUuid} (tag ${d.arqUuid}): ${d.reason}`;
}

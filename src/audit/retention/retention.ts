/**
 * Retention: streams that ended (ended.ts) longer than the retention period ago, and host streams'
 * periods that closed before it (host-periods.ts), move out of the live log into an archive segment (segment-file.ts), which the live log records, chained to the
 * segment before, in the commit that removes them (ArchivingStore). One run writes segments of at
 * most `maxStreams` streams until nothing more is due.
 */
import { project as auditProject } from "../../../projections/audit/projection.js";
import type { ArchiveSegmentRecord, EventStore, RecordedEvent, StreamRemoval } from "../../infra/eventstore/port.js";
import type { Write } from "../../infra/readstore/port.js";
import { recordHash } from "./archive.js";
import { END_RULES, streamEnds, type EndRule, type Pinned } from "./ended.js";
import { dueHostPeriods } from "./host-periods.js";
import { segmentFileName, writeSegment, type SegmentRefs } from "./segment-file.js";

export interface RetentionOptions {
  /** Streams that ended before this are archived. */
  cutoff: Date;
  /** The archive directory. */
  dir: string;
  /** Streams a segment holds at most (default 50 000). */
  maxStreams?: number;
  /** Count what is due, write nothing. */
  dryRun?: boolean;
  /** The time recorded in the segment (default now). */
  now?: Date;
  onProgress?(p: RetentionProgress): void;
}

export interface RetentionProgress {
  segments: number;
  streams: number;
  events: number;
}

export interface RetentionResult extends RetentionProgress {
  /** The segments written, with their compressed size. */
  written: Array<ArchiveSegmentRecord & { bytes: number }>;
  dryRun: boolean;
}

/** A stream due for the archive: its name and last revision. */
export interface DueStream extends StreamRemoval {
  endedAt: Date;
}

const PAGE = 5000;

/** Archives every ended stream due, a segment at a time. */
export async function runRetention(store: EventStore, o: RetentionOptions): Promise<RetentionResult> {
  const archiving = store.archiving;
  if (!archiving) throw new Error(`the ${store.kind} event store keeps no archive (docs/audit.md, "Retention")`);
  const result: RetentionResult = { segments: 0, streams: 0, events: 0, written: [], dryRun: o.dryRun === true };
  const max = o.maxStreams ?? 50_000;
  const keep = await pinned(store);
  /** One segment's worth of due streams: archived, or only counted (`events`) in a dry run. */
  const take = async (due: Parameters<typeof archiveSegment>[1], events: () => Promise<number>) => {
    result.streams += due.length;
    if (o.dryRun) result.events += await events();
    else {
      const written = await archiveSegment(store, due, o);
      result.segments++;
      result.events += written.events;
      result.written.push(written);
    }
    o.onProgress?.({ segments: result.segments, streams: result.streams, events: result.events });
  };
  for (let from: Cursor | undefined; ; ) {
    const { due, cursor } = await dueStreams(store, o.cutoff, max, keep, from);
    from = cursor;
    if (due.length === 0 && cursor === undefined) break;
    if (due.length === 0) continue;
    await take(due, async () => due.reduce((n, d) => n + d.revision + 1, 0));
    if (cursor === undefined) break;
  }
  // Then the hosts' closed periods, a segment at a time in the same way.
  for (let after: string | undefined, more = true; more; ) {
    const { due, cursor } = await dueHostPeriods(store, o.cutoff, max, keep, after);
    after = cursor;
    more = cursor !== undefined;
    if (due.length === 0) continue;
    await take(due, async () => (await Promise.all(due.map(async (d) => d.before! - (await firstRevision(store, d.stream))))).reduce((n, k) => n + k, 0));
  }
  return result;
}

const firstRevision = async (store: EventStore, stream: string): Promise<number> => (await store.readStream(stream, { maxCount: 1 }))[0]?.revision ?? 0;

/** A due stream's events that move: the stream whole, or its revisions before `before` that the live log still holds. */
async function archivedEvents(store: EventStore, d: DueStream): Promise<RecordedEvent[]> {
  if (d.before === undefined) return store.readStream(d.stream, { maxCount: d.revision + 1 });
  const first = await firstRevision(store, d.stream);
  return store.readStream(d.stream, { fromRevision: first, maxCount: d.before - first });
}

/**
 * Positions that stay in the live log: its first event (the log's identity for read models), its
 * last (the head), and those after the store's bound (EventStoreDB: the chain's newest checkpoint).
 */
async function pinned(store: EventStore): Promise<Pinned> {
  const [first] = await store.readAll({ maxCount: 1 });
  const head = await store.headPosition();
  const bound = await store.archiving?.keepAfter?.();
  const set = new Set([first?.position, head].filter((p): p is bigint => p !== undefined));
  return { has: (p) => set.has(p) || (bound !== undefined && p > bound) };
}

interface Cursor {
  rule: number;
  after?: string;
}

/** Up to `max` streams due, from `from` on in the rules' order; the cursor to go on from (undefined: done). */
export async function dueStreams(store: EventStore, cutoff: Date, max: number, keep: Pinned, from: Cursor = { rule: 0 }): Promise<{ due: DueStream[]; cursor?: Cursor }> {
  const due: DueStream[] = [];
  for (let { rule, after } = from; rule < END_RULES.length; rule++, after = undefined) {
    const r = END_RULES[rule]!;
    for (;;) {
      const page = await streamEnds(store, { prefix: r.prefix, after, maxCount: PAGE });
      if (!page || page.length === 0) break;
      for (const end of page) {
        if (!r.types.includes(end.type)) continue;
        const d = await ifDue(store, r, end.stream, cutoff, keep);
        if (d) due.push(d);
        if (due.length >= max) return { due, cursor: { rule, after: end.stream } };
      }
      after = page.at(-1)!.stream;
      if (page.length < PAGE) break;
    }
  }
  return { due };
}

async function ifDue(store: EventStore, rule: EndRule, stream: string, cutoff: Date, keep: Pinned): Promise<DueStream | undefined> {
  // Its last event first (one read): a stream that ended, ends no earlier than that.
  const [last] = await store.readStream(stream, { direction: "backwards", maxCount: 1 });
  if (!last || last.recordedAt.getTime() > cutoff.getTime()) return undefined;
  const events = await store.readStream(stream, { maxCount: last.revision + 1 });
  const endedAt = rule.endedAt ? rule.endedAt(events) : last.recordedAt;
  if (!(endedAt.getTime() <= cutoff.getTime()) || events.some((e) => keep.has(e.position))) return undefined;
  return { stream, revision: last.revision, endedAt };
}

/** Writes one segment of these streams and removes them from the live log, in that order. */
async function archiveSegment(store: EventStore, due: readonly DueStream[], o: RetentionOptions): Promise<ArchiveSegmentRecord & { bytes: number }> {
  const archiving = store.archiving!;
  const events = (await Promise.all(due.map((d) => archivedEvents(store, d)))).flat().sort((a, b) => (a.position < b.position ? -1 : 1));
  const previous = (await archiving.readArchiveSegments()).at(-1);
  const seq = (previous?.seq ?? 0) + 1;
  const file = segmentFileName(seq);
  const { sha256, bytes } = await writeSegment(o.dir, file, events, segmentRefs(events));
  const record: ArchiveSegmentRecord = {
    seq,
    file,
    sha256,
    events: events.length,
    streams: due.length,
    first: events[0]!.position.toString(),
    last: events.at(-1)!.position.toString(),
    previous: recordHash(previous),
    at: (o.now ?? new Date()).toISOString(),
  };
  await archiving.removeStreams(due.map(({ stream, revision, before }) => (before === undefined ? { stream, revision } : { stream, revision, before })), record);
  return { ...record, bytes };
}

/** The audit index's entries of these events (object and request keys), and each stream's span. */
export function segmentRefs(events: readonly RecordedEvent[]): SegmentRefs {
  const refs: Record<string, string[]> = {};
  const streams: Record<string, [string, string]> = {};
  for (const e of events) {
    for (const w of auditWrites(e)) (refs[w.key] ??= []).push(w.member);
    const span = streams[e.stream];
    if (span) span[1] = e.position.toString();
    else streams[e.stream] = [e.position.toString(), e.position.toString()];
  }
  return { refs, streams };
}

/** The audit index entries an event added that an archive takes away (the parts of a device stay: they name no event). */
function auditWrites(e: RecordedEvent): Array<{ key: string; member: string }> {
  return auditProject(e).flatMap((w) => (w.op === "zadd" && !w.nx ? [{ key: w.key, member: w.member }] : []));
}

/** The writes that take archived events' entries out of the live audit index. */
export const retractions = (events: readonly RecordedEvent[]): Write[] => events.flatMap((e) => auditWrites(e).map((w) => ({ op: "zrem", ...w }) as const));

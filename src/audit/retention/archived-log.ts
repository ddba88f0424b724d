/**
 * The log as it was before retention: the live log with its archive. Audit reads through these
 * (history, trace, asOf: one stream; verify: the whole log in position order); the service's
 * commands and read models see the live log only.
 */
import { streamPrefix } from "../../domain/shared/types.js";
import { DelegatingEventStore } from "../../infra/eventstore/delegating-store.js";
import type { EventStore, ReadAllOptions, ReadStreamOptions, RecordedEvent } from "../../infra/eventstore/port.js";
import { verifyLog } from "../verify.js";
import type { VerifiedStore, VerifyOptions, VerifyReport } from "../verify-types.js";
import type { Archive } from "./archive.js";

/**
 * Reads a stream the live log no longer holds from the archive (an ended stream, archived whole),
 * and a host stream whose closed periods were archived as its archived revisions, then its live ones.
 */
export class ArchiveReadingStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    readonly archive: Archive,
  ) {
    super(inner);
  }

  override async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const [first] = await this.inner.readStream(stream, { maxCount: 1 });
    // Live from its first revision: nothing of it is archived.
    if (first?.revision === 0) return this.inner.readStream(stream, options);
    const archived = await this.archive.readStream(stream);
    if (!first) return slice(archived, options);
    const live = await this.inner.readStream(stream);
    return slice([...archived.filter((e) => e.revision < first.revision), ...live], options);
  }
}

function slice(events: RecordedEvent[], o: ReadStreamOptions): RecordedEvent[] {
  const max = o.maxCount ?? Number.POSITIVE_INFINITY;
  if (o.direction === "backwards") {
    const from = o.fromRevision ?? Number.POSITIVE_INFINITY;
    return events.filter((e) => e.revision <= from).reverse().slice(0, max);
  }
  return events.filter((e) => e.revision >= (o.fromRevision ?? 0)).slice(0, max);
}

/**
 * The log a read model's rebuild replays (the projector's `replayLog`): the live log with the
 * hosts' archived periods, by position, so that a model rebuilt after retention still holds what
 * those periods recorded (a device discovered years ago). Ended streams' archived events are left
 * out: no model keeps anything of them.
 */
export function replayLog(live: EventStore, archive: Archive): Pick<EventStore, "readAll"> {
  return { readAll: mergedLog(live, archive, (e) => e.stream.startsWith(streamPrefix.host)).readAll };
}

/** The live log and the archive merged by position, for verify (readAll is unfiltered: verify reads it so). */
export function mergedLog(live: EventStore, archive: Archive, archived: (e: RecordedEvent) => boolean = () => true): VerifiedStore {
  const reader = new ArchiveReadingStore(live, archive);
  let cursor: { after: bigint | undefined; source: AsyncGenerator<RecordedEvent>; peeked: RecordedEvent | undefined | null } | undefined;
  const peek = async (after: bigint | undefined): Promise<RecordedEvent | undefined> => {
    if (!cursor || cursor.after !== after) cursor = { after, source: only(archive.events(after), archived), peeked: null };
    if (cursor.peeked === null) {
      const r = await cursor.source.next();
      cursor.peeked = r.done ? undefined : r.value;
    }
    return cursor.peeked;
  };
  return {
    headPosition: () => live.headPosition(),
    readCheckpoints: (o) => live.readCheckpoints(o),
    readStream: (stream, o) => reader.readStream(stream, o),
    async readAll(o: ReadAllOptions = {}): Promise<RecordedEvent[]> {
      const max = o.maxCount ?? 1000;
      const page = await live.readAll({ after: o.after, maxCount: max });
      const out: RecordedEvent[] = [];
      let after = o.after;
      let i = 0;
      while (out.length < max) {
        const a = await peek(after);
        const l = page[i];
        // The live page ran out but the live log goes on: archived events after it wait for the next page.
        if (!l && page.length === max) break;
        if (!a && !l) break;
        // An event both archived and live (EventStoreDB: a run cut short between recording its segment and removing its streams) is read once.
        if (a && l && a.position === l.position) cursor!.peeked = null;
        const e = l && (!a || l.position <= a.position) ? page[i++]! : (cursor!.peeked = null, a!);
        out.push(e);
        after = e.position;
        if (cursor) cursor.after = after;
      }
      return out;
    },
  };
}

async function* only(source: AsyncGenerator<RecordedEvent>, keep: (e: RecordedEvent) => boolean): AsyncGenerator<RecordedEvent> {
  for await (const e of source) if (keep(e)) yield e;
}

/** audit verify over the archive and the live log together: the segments' files, then every hash across both. */
export async function verifyWithArchive(live: EventStore, archive: Archive, options: VerifyOptions = {}): Promise<VerifyReport> {
  const problems = await archive.check();
  let report: VerifyReport;
  try {
    report = await verifyLog(mergedLog(live, archive), options);
  } catch (err) {
    // A changed byte in a compressed segment may leave it unreadable: that is a break too.
    report = { ok: false, events: 0, hashed: 0, unhashed: { count: 0, first: null, last: null }, checkpoints: 0, breaks: 0, firstBreaks: [], chain: null, until: null };
    problems.push({ seq: 0, file: "", reason: `the archive cannot be read: ${(err as Error).message}` });
  }
  if (problems.length === 0) return report;
  const found = problems.map((p) => ({ position: "", stream: "", revision: -1, eventId: "", reason: p.file ? `archive segment ${p.seq} (${p.file}): ${p.reason}` : p.reason }));
  return { ...report, ok: false, breaks: report.breaks + found.length, firstBreaks: [...found, ...report.firstBreaks] };
}

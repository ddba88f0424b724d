/**
 * A host stream's closed periods (docs/operations.md, "Retention"): a host stream never ends, but
 * it is cut into periods, each starting with HostBooksClosed. The events before the newest
 * summary recorded before the cutoff belong to periods that closed before it: they move to the
 * archive, and the stream is read from that summary on.
 */
import { streamPrefix } from "../../domain/shared/types.js";
import { EventLoopTurns } from "../../infra/event-loop-turns.js";
import type { EventStore, StreamRemoval } from "../../infra/eventstore/port.js";
import { streamEnds, type Pinned } from "./ended.js";

/** A host stream's revisions due for the archive: those before `before`; `endedAt`: when that summary was recorded. */
export interface DuePeriods extends StreamRemoval {
  before: number;
  endedAt: Date;
}

const SUMMARY = "HostBooksClosed";
const PAGE = 256;

/**
 * The cursor after the last host stream looked at (undefined: start at the first). Every host
 * stream is read from its end, which for a fleet of 10,000 hosts is seconds of reads: the event
 * loop gets a turn every few milliseconds (`turns`).
 */
export async function dueHostPeriods(
  store: EventStore,
  cutoff: Date,
  max: number,
  keep: Pinned,
  after?: string,
  turns = new EventLoopTurns(),
): Promise<{ due: DuePeriods[]; cursor?: string }> {
  const due: DuePeriods[] = [];
  for (;;) {
    const page = await streamEnds(store, { prefix: streamPrefix.host, after, maxCount: PAGE });
    if (!page || page.length === 0) return { due };
    for (const end of page) {
      await turns.pause();
      const d = await closedPeriods(store, end.stream, cutoff, keep);
      if (d) due.push(d);
      if (due.length >= max) return { due, cursor: end.stream };
    }
    after = page.at(-1)!.stream;
    if (page.length < PAGE) return { due };
  }
}

/** The stream's revisions before its newest summary recorded at or before the cutoff, if any are still live. */
async function closedPeriods(store: EventStore, stream: string, cutoff: Date, keep: Pinned): Promise<DuePeriods | undefined> {
  const [first] = await store.readStream(stream, { maxCount: 1 });
  if (!first) return undefined;
  let last: number | undefined;
  for (let from: number | undefined; ; ) {
    const page = await store.readStream(stream, { direction: "backwards", fromRevision: from, maxCount: PAGE });
    last ??= page[0]?.revision;
    const summary = page.find((e) => e.type === SUMMARY && e.recordedAt.getTime() <= cutoff.getTime());
    if (summary) {
      if (summary.revision <= first.revision) return undefined;
      const archived = await store.readStream(stream, { fromRevision: first.revision, maxCount: summary.revision - first.revision });
      if (archived.some((e) => keep.has(e.position))) return undefined;
      return { stream, revision: last!, before: summary.revision, endedAt: summary.recordedAt };
    }
    const oldest = page.at(-1);
    if (page.length < PAGE || !oldest || oldest.revision <= first.revision) return undefined;
    from = oldest.revision - 1;
  }
}

/**
 * Retention on EventStoreDB (docs/audit.md, "Retention"): the archive segments are recorded in a
 * stream of the namespace (ARCHIVE_STREAM, at the revision the segment's number fixes, so two runs
 * cannot record the same number), then the streams leave the live log with the server's own means:
 * an ended stream is deleted (soft delete, at the revision it was archived at), a host stream's
 * closed periods are cut with its metadata's truncate-before (`$tb`). The server's reads skip them
 * at once; a scavenge, which the operator starts, reclaims their space.
 *
 * There is no transaction across streams: the segment is recorded first, so a run cut short leaves
 * events both archived and live (audit's merged log reads each position once), never events gone
 * that no segment holds. The global chain's checkpoints are recorded after the fact from the live
 * log (esdb-chain.ts), so only events at or before the newest checkpoint may go: `keepAfter`.
 */
import { type ChainCheckpoint } from "./chain.js";
import { StreamRemovalError } from "./lmdb-removal.js";
import { WrongExpectedRevisionError, type ArchiveSegmentRecord, type ArchivingStore, type EventStore, type ReadStreamEndsOptions, type StreamEnd, type StreamRemoval } from "./port.js";

export const ARCHIVE_STREAM = "archive-segments";
export const ARCHIVE_TYPE = "ArchiveSegmentRecorded";

/** What the adapter lends: its port, and the server's delete and truncate under the namespace's names. */
export interface EsdbArchivingDeps {
  store: Pick<EventStore, "readStream" | "readAll" | "append" | "readCheckpoints">;
  deleteStream(stream: string, revision: number): Promise<void>;
  truncateBefore(stream: string, revision: number): Promise<void>;
}

export class EsdbArchiving implements ArchivingStore {
  constructor(private readonly deps: EsdbArchivingDeps) {}

  async readArchiveSegments(): Promise<ArchiveSegmentRecord[]> {
    return (await this.deps.store.readStream(ARCHIVE_STREAM)).filter((e) => e.type === ARCHIVE_TYPE).map((e) => e.data as ArchiveSegmentRecord);
  }

  /**
   * The streams with this prefix and their last events, by name: one read of $all that the server
   * filters by the prefix (retention's cost on EventStoreDB, which keeps no list of streams).
   * A stream deleted since (still in $all until a scavenge) reads empty and is left out later.
   */
  async readStreamEnds(o: ReadStreamEndsOptions): Promise<StreamEnd[]> {
    const ends = new Map<string, StreamEnd>();
    for (let after: bigint | undefined; ; ) {
      const page = await this.deps.store.readAll({ after, maxCount: 4096, filter: { streamPrefixes: [o.prefix] } });
      for (const e of page) if (o.after === undefined || e.stream > o.after) ends.set(e.stream, { stream: e.stream, type: e.type, position: e.position });
      if (page.length < 4096) break;
      after = page.at(-1)!.position;
    }
    return [...ends.values()].sort((a, b) => (a.stream < b.stream ? -1 : 1)).slice(0, o.maxCount);
  }

  /** The newest checkpoint's position: events after it stay live until a checkpoint covers them. */
  async keepAfter(): Promise<bigint> {
    const all: ChainCheckpoint[] = await this.deps.store.readCheckpoints();
    return all.at(-1)?.position ?? 0n;
  }

  async removeStreams(removals: readonly StreamRemoval[], segment: ArchiveSegmentRecord): Promise<{ events: number }> {
    const events = await this.check(removals);
    if (events !== segment.events) throw new StreamRemovalError(`the segment holds ${segment.events} events but the streams have ${events}`);
    // The file's hash in the id: the same record sent again is a retry, another one under its number a conflict.
    const id = `archive-segment-${segment.seq}-${segment.sha256}`;
    const metadata = { principal: "system:retention", correlationId: id, causationId: id, at: segment.at };
    try {
      await this.deps.store.append(ARCHIVE_STREAM, [{ id, type: ARCHIVE_TYPE, data: segment, metadata }], segment.seq === 1 ? "no_stream" : segment.seq - 2);
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) throw new StreamRemovalError(`archive segment ${segment.seq} is not the next one: another archive run recorded one meanwhile`);
      throw err;
    }
    for (const { stream, revision, before } of removals) {
      if (before === undefined) await this.deps.deleteStream(stream, revision);
      else await this.deps.truncateBefore(stream, before);
    }
    return { events };
  }

  /** The events the removals take, or a StreamRemovalError when one does not hold (nothing is written then). */
  private async check(removals: readonly StreamRemoval[]): Promise<number> {
    const bound = await this.keepAfter();
    let events = 0;
    for (const { stream, revision, before } of removals) {
      const [first] = await this.deps.store.readStream(stream, { maxCount: 1 });
      const [last] = await this.deps.store.readStream(stream, { direction: "backwards", maxCount: 1 });
      if (!first || !last) throw new StreamRemovalError(`stream ${stream} is not in the live log`);
      if (before === undefined && last.revision !== revision) throw new StreamRemovalError(`stream ${stream} is at revision ${last.revision}, not ${revision} as archived: it is not removed`);
      if (before !== undefined && !(before > first.revision && before <= last.revision)) {
        throw new StreamRemovalError(`stream ${stream} holds revisions ${first.revision} to ${last.revision} live: its revisions before ${before} cannot be archived`);
      }
      const to = before === undefined ? revision : before - 1;
      const [lastGoing] = await this.deps.store.readStream(stream, { direction: "backwards", fromRevision: to, maxCount: 1 });
      if (lastGoing && lastGoing.position > bound) throw new StreamRemovalError(`stream ${stream} has events after the global chain's newest checkpoint: they stay live until one covers them`);
      events += to - first.revision + 1;
    }
    return events;
  }
}

/**
 * Retention in the embedded store: removing whole streams that ended (their events, their revision
 * index, their event ids), or a host stream's closed periods (its revisions before a summary, the
 * stream then read from that summary on: its head's truncation mark), and recording, in the same transaction, the archive segment that holds
 * them now (lmdb-layout.ts, `archive`). The global chain's checkpoints stay: `audit verify` walks
 * the archive and the live log together and recomputes the chain across both (docs/audit.md).
 *
 * LMDB puts the freed pages on its free list and reuses them for later writes: the file does not
 * shrink, it stops growing once retention frees about as much as the service writes.
 */
import { CHUNK, positionsOf, readHead, storedHead, type LmdbDatabases } from "./lmdb-layout.js";
import type { ArchiveSegmentRecord, StreamRemoval } from "./port.js";

export class StreamRemovalError extends Error {
  readonly code = "CONFLICT";
  override name = "StreamRemovalError";
}

/** Runs inside a write transaction; throws (and the transaction writes nothing) when a removal does not hold. */
export function removeStreamsNow(db: LmdbDatabases, removals: readonly StreamRemoval[], segment: ArchiveSegmentRecord, lastKey: number | undefined): number {
  const last = [...db.archive.getRange({ reverse: true, limit: 1 })][0];
  const expectedSeq = (last?.key ?? 0) + 1;
  if (segment.seq !== expectedSeq) throw new StreamRemovalError(`archive segment ${segment.seq} is not the next one (${expectedSeq}): another archive run recorded one meanwhile`);
  const firstKey = [...db.log.getKeys({ limit: 1 })][0];
  let events = 0;
  for (const removal of removals) {
    const { stream, revision, before } = removal;
    const head = readHead(db.heads, stream);
    if (before === undefined && (!head || head.revision !== revision)) {
      throw new StreamRemovalError(`stream ${stream} is at revision ${head?.revision ?? "none"}, not ${revision} as archived: it is not removed`);
    }
    if (!head) throw new StreamRemovalError(`stream ${stream} is not in the live log`);
    const from = head.truncatedBefore ?? 0;
    if (before !== undefined && !(before > from && before <= head.revision)) {
      throw new StreamRemovalError(`stream ${stream} holds revisions ${from} to ${head.revision} live: its revisions before ${before} cannot be archived`);
    }
    const to = before === undefined ? revision : before - 1;
    for (const p of positionsOf(db.chunks, stream, head, from, to)) {
      // The first event names the log (read models check it) and the last one holds its head position.
      if (p === firstKey || p === lastKey) throw new StreamRemovalError(`stream ${stream} holds the log's ${p === firstKey ? "first" : "last"} event: it stays in the live log`);
      const event = db.log.get(p);
      if (!event || event.stream !== stream) throw new StreamRemovalError(`position ${p} does not hold an event of ${stream}`);
      db.ids.removeSync(event.id);
      db.log.removeSync(p);
      events++;
    }
    if (before === undefined) {
      for (let base = 0; base + CHUNK <= revision - (revision % CHUNK); base += CHUNK) db.chunks.removeSync([stream, base]);
      db.heads.removeSync(stream);
    } else {
      // Closed chunks wholly before the mark go; the one it falls in stays (reads start at the mark).
      for (let base = from - (from % CHUNK); base + CHUNK <= before && base + CHUNK <= head.revision - (head.revision % CHUNK); base += CHUNK) db.chunks.removeSync([stream, base]);
      db.heads.putSync(stream, storedHead({ ...head, truncatedBefore: before }));
    }
  }
  if (events !== segment.events) throw new StreamRemovalError(`the segment holds ${segment.events} events but the streams have ${events}`);
  db.archive.putSync(segment.seq, segment);
  return events;
}

/** The archive segments recorded, in order. */
export const readSegments = (db: LmdbDatabases): ArchiveSegmentRecord[] => [...db.archive.getRange({})].map(({ value }) => value);

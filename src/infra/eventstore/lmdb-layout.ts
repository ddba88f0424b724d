/**
 * What the embedded store keeps in LMDB (named databases of one environment, so one transaction
 * spans them all):
 *   log     position               -> StoredEvent   the global log, read in key order
 *   heads   stream                 -> Head          the stream's revision and the positions of
 *                                                   its last, still open chunk of revisions (and
 *                                                   the revision reads start at, once retention
 *                                                   moved a host's closed periods out)
 *   chunks  [stream, firstRev]     -> positions[]   closed chunks of CHUNK revisions each
 *   ids     event id               -> position      idempotent retries and duplicate ids
 *   checkpoints position           -> hash          the global hash chain's checkpoints (chain.ts)
 *   chain   "head"                 -> [position, hash]  the global chain after the last event
 *           "v2"                   -> [position, hash]  where the global chain's version 2 began
 *                                                   (also a checkpoint); absent: version 1 throughout
 *   archive seq                    -> ArchiveSegmentRecord  the archive segments retention wrote
 *                                                   (lmdb-removal.ts); their events are no longer in
 *                                                   log, heads, chunks or ids, so positions have gaps
 * Positions are 1, 2, 3, ... (ordered-binary number keys, exact up to 2^53), bigint at the port.
 *
 * Why chunks: an index entry per event ([stream, revision] -> position) dirties one B-tree page
 * per stream per commit, because every stream's newest entries sit on a page of their own. The
 * open chunk lives in the head instead, which is rewritten by every append anyway and packs many
 * streams per page; a closed chunk costs one write per CHUNK events. The head also keeps the hash
 * of the stream's last event, so chaining the next one reads nothing more.
 *
 * Logs written before the hash chain existed have events, heads and no chain: their events have
 * no `hash`, and the chain starts at the first event written after (chain.ts, docs/audit.md).
 */
import type { Database } from "lmdb";
import type { ArchiveSegmentRecord, EventMetadata, NewEvent, ReadStreamEndsOptions, RecordedEvent, StreamEnd } from "./port.js";

/** The value stored under a position. The position itself is the key. */
export interface StoredEvent {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  /** Milliseconds since the epoch. */
  recordedAt: number;
  /** Link in the stream's hash chain (absent on events written before the chain existed). */
  hash?: string;
  /** The hash's chain version (chain.ts); absent for version 1, so records written before version 2 read as they are. */
  chainVersion?: number;
}

/** A stream's last revision and the positions of its open chunk: revisions revision - (revision % CHUNK) .. revision. */
export interface Head {
  revision: number;
  open: number[];
  /** The hash of the stream's last event; undefined when it has none (written before the chain). */
  hash?: string;
  /**
   * Retention moved the stream's revisions before this one to the archive (a host stream's closed
   * periods, lmdb-removal.ts): reads start here, as EventStoreDB's `$tb`. Absent: none moved.
   */
  truncatedBefore?: number;
}
export type StoredHead = [revision: number, open: number[], hash?: string, truncatedBefore?: number];

/** The global chain after the last event written: [position, hash]. */
export type StoredChainHead = [position: number, hash: string];

export interface LmdbDatabases {
  log: Database<StoredEvent, number>;
  heads: Database<StoredHead, string>;
  chunks: Database<number[], [string, number]>;
  ids: Database<number, string>;
  checkpoints: Database<string, number>;
  chain: Database<StoredChainHead, string>;
  archive: Database<ArchiveSegmentRecord, number>;
}

export const CHAIN_HEAD_KEY = "head";
/** Where global chain version 2 began (chain.ts): set with the chain's start in a new log, at the head in a log whose chain began as version 1. */
export const CHAIN_V2_KEY = "v2";

/** Revisions per stream chunk. The open chunk is rewritten by every append to its stream. */
export const CHUNK = 32;
// LMDB's default key limit is 1978 bytes, and chunk keys also carry a revision.
const MAX_KEY_BYTES = 1024;

export function readHead(heads: LmdbDatabases["heads"], stream: string): Head | undefined {
  const stored = heads.get(stream);
  return stored && { revision: stored[0], open: stored[1], hash: stored[2], ...(stored[3] !== undefined ? { truncatedBefore: stored[3] } : {}) };
}

/** The head as stored: its truncation mark only when it has one. */
export const storedHead = (h: Head): StoredHead => (h.truncatedBefore !== undefined ? [h.revision, h.open, h.hash, h.truncatedBefore] : [h.revision, h.open, h.hash!]);

/** Positions of revisions lo..hi of a stream: closed chunks from the chunk index, then the open chunk. */
export function positionsOf(chunks: LmdbDatabases["chunks"], stream: string, head: Head, lo: number, hi: number): number[] {
  const { revision: last, open } = head;
  const openStart = last - (last % CHUNK);
  const positions: number[] = [];
  if (lo < openStart) {
    const range = chunks.getRange({ start: [stream, lo - (lo % CHUNK)], end: [stream, Math.min(hi, openStart - 1) + 1] });
    for (const { key, value } of range) {
      const base = key[1];
      for (let r = Math.max(lo, base); r <= Math.min(hi, base + CHUNK - 1); r++) positions.push(value[r - base]!);
    }
  }
  for (let r = Math.max(lo, openStart); r <= hi; r++) positions.push(open[r - openStart]!);
  return positions;
}

/**
 * The last event of each stream under a prefix (EventStore.readStreamEnds): the heads are keyed by
 * stream name, so the streams of a prefix are one range, and a head's open chunk ends with the
 * position of the stream's last event. One read of the log per stream, for its type.
 */
export function readStreamEnds(db: LmdbDatabases, { prefix, after, maxCount }: ReadStreamEndsOptions): StreamEnd[] {
  const out: StreamEnd[] = [];
  if (maxCount <= 0) return out;
  const start = after !== undefined && after > prefix ? after : prefix;
  for (const { key, value } of db.heads.getRange({ start })) {
    if (!key.startsWith(prefix)) break;
    if (key === after) continue;
    const position = value[1][value[0] % CHUNK]!;
    out.push({ stream: key, type: db.log.get(position)!.type, position: BigInt(position) });
    if (out.length >= maxCount) break;
  }
  return out;
}

export function toRecorded(position: number, s: StoredEvent): RecordedEvent {
  return {
    id: s.id,
    stream: s.stream,
    revision: s.revision,
    position: BigInt(position),
    type: s.type,
    data: s.data,
    metadata: s.metadata,
    recordedAt: new Date(s.recordedAt),
    hash: s.hash,
    chainVersion: s.chainVersion,
  };
}

/** Rejects, before the write transaction, what LMDB could not store as a key. */
export function validate(stream: string, events: readonly NewEvent[]): void {
  if (typeof stream !== "string" || stream.length === 0) throw new TypeError("stream name must be a non-empty string");
  if (tooLong(stream)) throw new RangeError(`stream name longer than ${MAX_KEY_BYTES} bytes`);
  for (const e of events) {
    if (typeof e.id !== "string" || e.id.length === 0) {
      throw new TypeError(`event id must be a non-empty string (stream ${stream})`);
    }
    if (tooLong(e.id)) throw new RangeError(`event id longer than ${MAX_KEY_BYTES} bytes`);
  }
}

// A UTF-16 code unit takes at most 3 UTF-8 bytes: short strings need no byte count.
const tooLong = (s: string): boolean => s.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(s) > MAX_KEY_BYTES;

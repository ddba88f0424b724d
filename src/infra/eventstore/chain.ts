/**
 * The tamper-evident log: what an event's hash covers, and how hashes chain. Every adapter writes
 * these hashes with the event (same commit); `cyborg-es audit verify` recomputes them.
 *
 * An event's stream hash has a version (RecordedEvent.chainVersion; absent means 1). Events are
 * written under CHAIN_VERSION; version 1 events (logs written before version 2, imports of their
 * exports) keep theirs, and a stream may hold both (each link uses the previous event's hash,
 * whatever its version):
 *
 *   version 1: digest = SHA-256( JSON.stringify([stream, id, type, data, metadata]) )
 *              hash_r = SHA-256( `${hash_(r-1)}:${r}:${digest}` )
 *   version 2: hash_r = SHA-256( JSON.stringify([stream, id, type, data, metadata, r, hash_(r-1)]) )
 *
 *   per stream, hash_(-1) = GENESIS; version 2 is one SHA-256 an event instead of two (the text
 *   of version 1's link starts with a hex digit, version 2's with "[": the two never collide).
 *
 * The global chain, over the whole log (lmdb, memory), also has a version (ChainCheckpoint.version):
 *
 *   version 1: global_p = SHA-256( `${global_(p-1)}:${p}:${hash_p}` )
 *   version 2: cut into segments at its checkpoints; in the segment that starts at checkpoint c,
 *              global_p = SHA-256( global_c + `:${q}:${hash_q}` for each q in c+1..p, in order )
 *
 *   version 2 is one SHA-256 a segment for a walk (each event adds 80 characters to the text)
 *   instead of one an event. Its segments start at the chain's start, at every CHECKPOINT_INTERVAL-th
 *   position, and, in an lmdb log whose chain began as version 1, where version 2 began (the
 *   head when this version first appended to it: the checkpoint there has version 2).
 *
 * The stream chain links an event to the previous event of its stream, so changing, removing or
 * reordering an event breaks the link at that event. The global chain makes every event depend on
 * every event before it in the log; a checkpoint keeps its value every CHECKPOINT_INTERVAL
 * positions (and at the chain's start and head), so a removed or inserted event is caught even at
 * a stream's end.
 *
 * Not covered: recordedAt (the store's clock; EventStoreDB sets it itself) and, in the stream
 * chain, the position (EventStoreDB assigns it after the append). `metadata.at`, the command's
 * time, is covered. JSON.stringify keeps the key order the event was written with, and every store
 * keeps that order (msgpack records, JSON, structuredClone), so a digest is the same when computed
 * from what the store returns, from an NDJSON export, or from the event as appended.
 */
import { createHash, hash as oneShotHash, type Hash } from "node:crypto";

/** The hash before a stream's first hashed event, and the global chain's starting value. */
export const GENESIS = "0".repeat(64);

/** The global chain keeps a checkpoint every this many positions. */
export const CHECKPOINT_INTERVAL = 1000;

// crypto.hash (Node >= 20.12) skips the Hash object: about twice as fast for short inputs. (Its own
// copy of domain/shared/sha256.ts: the event-store adapters depend on nothing of the domain.)
const sha256: (s: string) => string =
  typeof oneShotHash === "function" ? (s) => oneShotHash("sha256", s, "hex") : (s) => createHash("sha256").update(s).digest("hex");

/** The version new events are hashed with (see above). */
export const CHAIN_VERSION = 2;

export interface Hashable {
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
  /** Absent: version 1. */
  chainVersion?: number;
}

/** What an event says (its place in the chain aside): JSON.stringify([stream, id, type, data, metadata]). Throws a TypeError when data or metadata is not JSON. */
export const contentText = (stream: string, e: Hashable): string => JSON.stringify([stream, e.id, e.type, e.data, e.metadata]);

/** Version 1's digest of what an event says. */
export const contentDigest = (stream: string, e: Hashable): string => sha256(contentText(stream, e));

/** Version 1: the hash of the event at `revision` of a stream, after the event whose hash is `previous`. */
export const linkHash = (previous: string, revision: number, digest: string): string => sha256(`${previous}:${revision}:${digest}`);

/** Version 2 from the event's content text (contentText): the text with `revision` and `previous` appended to its array. */
export const textLinkHash = (previous: string, revision: number, text: string): string => sha256(`${text.slice(0, -1)},${revision},${JSON.stringify(previous)}]`);

/** Version 2: what is hashed, as an array (its JSON text is hashed). */
export const versionTwoRow = (previous: string, e: Hashable & { stream: string; revision: number }): unknown[] => [e.stream, e.id, e.type, e.data, e.metadata, e.revision, previous];

/** Version 2 from the JSON text of versionTwoRow. */
export const versionTwoHash = (rowText: string): string => sha256(rowText);

/** The hash an event must carry under its version, given the hash of the previous event of its stream. */
export function eventHash(previous: string, e: Hashable & { stream: string; revision: number }): string {
  if (e.chainVersion === 2) return versionTwoHash(JSON.stringify(versionTwoRow(previous, e)));
  if (e.chainVersion === undefined || e.chainVersion === 1) return linkHash(previous, e.revision, contentDigest(e.stream, e));
  throw new RangeError(`unknown hash chain version ${e.chainVersion}`);
}

/** The version an appended event is hashed with: CHAIN_VERSION unless it names 1 (an import keeps an exported event's). */
export const versionOf = (e: { chainVersion?: number }): number => {
  const v = e.chainVersion ?? CHAIN_VERSION;
  if (v !== 1 && v !== 2) throw new RangeError(`unknown hash chain version ${v}`);
  return v;
};

/** Global chain version 1: the chain after the event at `position`, whose own hash is `hash`. */
export const globalLink = (previous: string, position: bigint | number, hash: string): string => sha256(`${previous}:${position}:${hash}`);

/** Global chain version 2: what the event at `position`, whose own hash is `hash`, adds to its segment's text. */
export const segmentLink = (position: bigint | number, hash: string): string => `:${position}:${hash}`;

/** Global chain version 2: the chain's value after a segment's text (its checkpoint's value, then segmentLink of each event). */
export const segmentValue = (text: string): string => sha256(text);

/**
 * A version 2 segment as a store writes it: SHA-256 kept running (the text is never held), so the
 * value after any event costs a copy of the hash state, not a pass over the segment.
 */
export class GlobalSegment {
  private constructor(
    /** The value at the segment's checkpoint. */
    readonly start: string,
    private readonly hash: Hash,
    private links: number,
  ) {}

  static from(start: string): GlobalSegment {
    return new GlobalSegment(start, createHash("sha256").update(start), 0);
  }

  add(position: bigint | number, hash: string): void {
    this.hash.update(segmentLink(position, hash));
    this.links++;
  }

  /** The chain's value after the last event added. */
  value(): string {
    return this.links === 0 ? this.start : this.hash.copy().digest("hex");
  }

  copy(): GlobalSegment {
    return new GlobalSegment(this.start, this.hash.copy(), this.links);
  }
}

/** A place where a store recorded the global chain's value. */
export interface ChainCheckpoint {
  position: bigint;
  /** The global chain's value after the event at `position` (GENESIS at the chain's start). */
  hash: string;
  /** The global chain's version after this checkpoint, up to the next one (see above). */
  version: 1 | 2;
  /** The chain's head (the last event written) and not a stored checkpoint: no version 2 segment starts there. */
  head?: true;
}

/**
 * A stream's hashes for events appended now, after `previous`, the stream's last hash. `texts` are
 * the events' content texts (computed before, so that data that is not JSON is refused early),
 * `versions` their chain versions (versionOf).
 */
export function chainHashes(previous: string | undefined, firstRevision: number, texts: readonly string[], versions: readonly number[]): string[] {
  const out: string[] = [];
  let prev = previous ?? GENESIS;
  for (let i = 0; i < texts.length; i++) {
    const r = firstRevision + i;
    out.push((prev = versions[i] === 2 ? textLinkHash(prev, r, texts[i]!) : linkHash(prev, r, sha256(texts[i]!))));
  }
  return out;
}

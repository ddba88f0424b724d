/**
 * The tamper-evident log: what an event's hash covers, and how hashes chain. Every adapter writes
 * these hashes with the event (same commit); `cyborg-es audit verify` recomputes them.
 *
 *   digest   = SHA-256( JSON.stringify([stream, id, type, data, metadata]) )
 *   hash_r   = SHA-256( `${hash_(r-1)}:${r}:${digest}` )      per stream; hash_(-1) = GENESIS
 *   global_p = SHA-256( `${global_prev}:${p}:${hash_p}` )      over the global log (lmdb, memory)
 *
 * The stream chain links an event to the previous event of its stream, so changing, removing or
 * reordering an event breaks the link at that event. The global chain links every event to the one
 * before it in the log; a checkpoint keeps its value every CHECKPOINT_INTERVAL positions (and at
 * the chain's start and head), so a removed or inserted event is caught even at a stream's end.
 *
 * Not covered: recordedAt (the store's clock; EventStoreDB sets it itself) and, in the stream
 * chain, the position (EventStoreDB assigns it after the append). `metadata.at`, the command's
 * time, is covered. JSON.stringify keeps the key order the event was written with, and every store
 * keeps that order (msgpack records, JSON, structuredClone), so a digest is the same when computed
 * from what the store returns, from an NDJSON export, or from the event as appended.
 */
import { createHash, hash as oneShotHash } from "node:crypto";

/** The hash before a stream's first hashed event, and the global chain's starting value. */
export const GENESIS = "0".repeat(64);

/** The global chain keeps a checkpoint every this many positions. */
export const CHECKPOINT_INTERVAL = 1000;

// crypto.hash (Node >= 20.12) skips the Hash object: about twice as fast for short inputs. (Its own
// copy of domain/shared/sha256.ts: the event-store adapters depend on nothing of the domain.)
const sha256: (s: string) => string =
  typeof oneShotHash === "function" ? (s) => oneShotHash("sha256", s, "hex") : (s) => createHash("sha256").update(s).digest("hex");

export interface Hashable {
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
}

/** The digest of what an event says (its place in the chain aside). Throws a TypeError when data or metadata is not JSON. */
export function contentDigest(stream: string, e: Hashable): string {
  const json = JSON.stringify([stream, e.id, e.type, e.data, e.metadata]);
  return sha256(json);
}

/** The hash of the event at `revision` of a stream, after the event whose hash is `previous`. */
export const linkHash = (previous: string, revision: number, digest: string): string => sha256(`${previous}:${revision}:${digest}`);

/** The hash an event must carry, given the hash of the previous event of its stream. */
export const eventHash = (previous: string, e: Hashable & { stream: string; revision: number }): string =>
  linkHash(previous, e.revision, contentDigest(e.stream, e));

/** The global chain after the event at `position`, whose own hash is `hash`. */
export const globalLink = (previous: string, position: bigint | number, hash: string): string => sha256(`${previous}:${position}:${hash}`);

/** A place where a store recorded the global chain's value. */
export interface ChainCheckpoint {
  position: bigint;
  /** The global chain's value after the event at `position` (GENESIS at the chain's start). */
  hash: string;
}

/** A stream's hashes for events appended now, after `previous`, the stream's last hash. */
export function chainHashes(previous: string | undefined, firstRevision: number, digests: readonly string[]): string[] {
  const out: string[] = [];
  let prev = previous ?? GENESIS;
  for (let i = 0; i < digests.length; i++) out.push((prev = linkHash(prev, firstRevision + i, digests[i]!)));
  return out;
}

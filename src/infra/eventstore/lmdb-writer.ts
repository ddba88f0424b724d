/**
 * One append, written inside the embedded store's write transaction: everything it reads is the
 * state it writes over, so the checks and the append are one atomic step. Everything that can
 * throw (the checks, msgpack encoding) runs before the first write, so a failed append leaves
 * nothing behind without the cost of a child transaction per append.
 *
 * Hash chains (chain.ts): the content texts are serialised before the transaction (lmdb.ts, while
 * the previous commit syncs); here each event is hashed with its link to its stream's last hash (kept in the
 * head) and to the global chain, whose value is saved once per transaction (`finish`) and at a
 * checkpoint every `checkpointInterval` positions. The global chain is written as version 2
 * (GlobalSegment); a log whose chain began as version 1 goes on as version 2 from its head, with
 * a checkpoint there (`CHAIN_V2_KEY`).
 */
import { asBinary, type Binary, type Database, type RootDatabase } from "lmdb";
import { checkExpectedRevision, checkRetry, type StoredIdRef } from "./append-check.js";
import { chainHashes, GENESIS, GlobalSegment, versionOf } from "./chain.js";
import { CHAIN_HEAD_KEY, CHAIN_V2_KEY, CHUNK, readHead, storedHead, type LmdbDatabases, type StoredEvent } from "./lmdb-layout.js";
import type { AppendResult, ExpectedRevision, NewEvent, RecordedEvent } from "./port.js";

const NO_OVERWRITE = { noOverwrite: true } as const;

/** Data or metadata that msgpack cannot encode; thrown before anything was written. */
export class EncodeError extends Error {
  constructor(override readonly cause: unknown) {
    super("event data or metadata cannot be encoded");
  }
}

export class LmdbWriter {
  /** The log's last position as of write transaction `txnId`; saves a cursor per append. */
  private txnId = -1;
  private txnLastPosition = 0;
  /** Whether transaction `txnId` appended events (so it commits, as txnId). */
  private txnAppended = false;
  /** The global chain's segment up to `txnLastPosition` (undefined: no chain yet, it starts at the next event). */
  private segment: GlobalSegment | undefined;
  /** What `segment` was loaded or last saved for: [position, value], to know when it is still right after another transaction. */
  private saved: [number, string] | undefined;
  /** The chain moved in this transaction: `finish` saves it. */
  private chainMoved = false;
  /** The log database's own msgpack encoder (it knows the shared structures), and a raw view to put its output. */
  private readonly logEncoder: { encode(value: unknown): Uint8Array };
  private readonly logRaw: Database<Binary, number>;

  constructor(
    private readonly env: RootDatabase,
    private readonly db: LmdbDatabases,
    private readonly checkpointInterval: number,
  ) {
    this.logEncoder = (db.log as unknown as { encoder: { encode(value: unknown): Uint8Array } }).encoder;
    this.logRaw = db.log as unknown as Database<Binary, number>;
  }

  /**
   * Appends inside the running write transaction; `texts` are the events' content texts
   * (chain.ts); `fed` collects the events as readAll would return them.
   */
  write(stream: string, events: readonly NewEvent[], expected: ExpectedRevision, recordedAt: number, texts: readonly string[], fed?: RecordedEvent[]): AppendResult {
    const head = readHead(this.db.heads, stream);
    if (events.length === 0) {
      checkExpectedRevision(stream, expected, head?.revision);
      return head ? { revision: head.revision, position: BigInt(head.open.at(-1)!) } : { revision: -1, position: 0n };
    }
    const first = this.lastPosition() + 1;
    const firstRevision = head ? head.revision + 1 : 0;
    const versions = events.map(versionOf);
    const hashes = chainHashes(head?.hash, firstRevision, texts, versions);
    // Encode before the first write: an encoding error then leaves nothing behind.
    const encoded = events.map((e, i) => {
      const stored: StoredEvent = { id: e.id, stream, revision: firstRevision + i, type: e.type, data: e.data, metadata: e.metadata, recordedAt, hash: hashes[i]! };
      if (versions[i] !== 1) stored.chainVersion = versions[i];
      return this.encode(stored);
    });

    // Claim the ids with inserts that refuse to overwrite: the duplicate check and the index write
    // in one B-tree descent. An id that exists means a retry or a reuse; undo our claims and let
    // the shared rule decide. Claims are undone the same way when the revision check fails.
    let claimed = 0;
    while (claimed < events.length && this.db.ids.putSync(events[claimed]!.id, first + claimed, NO_OVERWRITE)) claimed++;
    if (claimed < events.length) {
      this.release(events, claimed);
      const retry = checkRetry(stream, events, (id) => this.lookupId(id));
      if (!retry) throw new Error(`event id index is inconsistent for an append to ${stream}`);
      return retry;
    }
    try {
      checkExpectedRevision(stream, expected, head?.revision);
    } catch (err) {
      this.release(events, claimed);
      throw err;
    }

    let open = head ? head.open : [];
    const date = fed && new Date(recordedAt);
    let segment = this.segment?.copy();
    if (segment === undefined) {
      // The global chain starts here: at position 1 in a new log, after the last event in a log
      // written before the chain existed.
      this.startSegment(first - 1, GENESIS);
      segment = GlobalSegment.from(GENESIS);
    }
    for (let i = 0; i < events.length; i++) {
      const revision = firstRevision + i;
      const position = first + i;
      if (revision % CHUNK === 0 && open.length > 0) {
        this.db.chunks.put([stream, revision - CHUNK], open);
        open = [];
      }
      open.push(position);
      this.logRaw.put(position, asBinary(encoded[i]!));
      segment.add(position, hashes[i]!);
      if (position % this.checkpointInterval === 0) {
        const value = segment.value();
        this.db.checkpoints.put(position, value);
        segment = GlobalSegment.from(value);
      }
      const e = events[i]!;
      // As readAll would return it (the feed shares data and metadata: events are immutable).
      fed?.push({ id: e.id, stream, revision, position: BigInt(position), type: e.type, data: e.data, metadata: e.metadata, recordedAt: date!, hash: hashes[i]!, chainVersion: versions[i] === 1 ? undefined : versions[i] });
    }
    const revision = firstRevision + events.length - 1;
    const last = first + events.length - 1;
    this.db.heads.put(stream, storedHead({ revision, open, hash: hashes.at(-1)!, truncatedBefore: head?.truncatedBefore }));
    this.txnLastPosition = last;
    this.txnAppended = true;
    this.segment = segment;
    this.chainMoved = true;
    return { revision, position: BigInt(last) };
  }

  /** At the end of a write transaction: saves the global chain's head if it moved. */
  finish(): void {
    if (!this.chainMoved) return;
    this.chainMoved = false;
    this.saved = [this.txnLastPosition, this.segment!.value()];
    this.db.chain.put(CHAIN_HEAD_KEY, this.saved);
  }

  lastLogKey(): number | undefined {
    for (const key of this.db.log.getKeys({ reverse: true, limit: 1 })) return key;
    return undefined;
  }

  private release(events: readonly NewEvent[], claimed: number): void {
    for (let i = 0; i < claimed; i++) this.db.ids.removeSync(events[i]!.id);
  }

  private encode(stored: StoredEvent): Uint8Array {
    try {
      // A copy: msgpack's output buffer is reused by later encodes.
      return Uint8Array.prototype.slice.call(this.logEncoder.encode(stored));
    } catch (cause) {
      throw new EncodeError(cause);
    }
  }

  private lastPosition(): number {
    const txnId = this.env.getWriteTxnId();
    if (txnId !== this.txnId) {
      // Transaction ids count commits: when ours appended and this one comes right after it,
      // nobody else wrote in between, and the position we ended at is still the last.
      const follows = txnId === this.txnId + 1 && this.txnAppended;
      this.txnId = txnId;
      this.txnAppended = false;
      this.chainMoved = false;
      if (!follows) {
        this.txnLastPosition = this.lastLogKey() ?? 0;
        this.loadSegment();
      }
    }
    return this.txnLastPosition;
  }

  /** The global chain's segment at the head, as stored: kept when it is the one this writer saved, else read back. */
  private loadSegment(): void {
    const head = this.db.chain.get(CHAIN_HEAD_KEY);
    if (head === undefined) {
      this.segment = undefined;
      return;
    }
    if (this.segment !== undefined && this.saved?.[0] === head[0] && this.saved[1] === head[1]) return;
    if (this.db.chain.get(CHAIN_V2_KEY) === undefined) {
      // A chain begun as version 1: version 2 from its head on.
      this.startSegment(head[0], head[1]);
      this.segment = GlobalSegment.from(head[1]);
    } else {
      // The segment from the last checkpoint: the hashes of the events since (fewer than the interval).
      let from = 0;
      for (const key of this.db.checkpoints.getKeys({ start: head[0], reverse: true, limit: 1 })) from = key;
      this.segment = GlobalSegment.from(this.db.checkpoints.get(from) ?? GENESIS);
      for (const { key, value } of this.db.log.getRange({ start: from + 1, end: head[0] + 1 })) this.segment.add(key, value.hash ?? "");
    }
    this.saved = [head[0], head[1]];
  }

  /** A version 2 segment begins at `position`, whose chain value is `value`: a checkpoint, and the mark where version 2 began if it is the first. */
  private startSegment(position: number, value: string): void {
    this.db.checkpoints.put(position, value);
    if (this.db.chain.get(CHAIN_V2_KEY) === undefined) this.db.chain.put(CHAIN_V2_KEY, [position, value]);
  }

  private lookupId(id: string): StoredIdRef | undefined {
    const position = this.db.ids.get(id);
    if (position === undefined) return undefined;
    const stored = this.db.log.get(position)!;
    return { stream: stored.stream, revision: stored.revision, position: BigInt(position) };
  }
}

/**
 * `cyborg-es audit verify`: walks the log in position order and recomputes every hash (chain.ts).
 *
 * - Each hashed event must carry SHA-256(previous hash of its stream, revision, content digest).
 *   A changed byte in an event, a removed or reordered event of a stream, breaks the link at
 *   exactly that event (later events link to the stored hash, so one change is one break).
 * - The global chain is recomputed from the stored hashes and compared at every checkpoint the
 *   store kept: an event removed or inserted at a stream's end, or a truncated log, is found
 *   between two checkpoints.
 * - Events written before the chain existed have no hash: they are counted as `unhashed` and are
 *   not a failure, as long as they come before the chain's start (the store's first checkpoint)
 *   and before the first hashed event of their stream. An event without a hash after that is a
 *   break (a hash was stripped).
 *
 * Memory is bounded: the last hash of up to `streamCache` streams is remembered; an older one is
 * read back from the store when its stream shows up again. Events come a page at a time.
 */
import { contentDigest, eventHash, GENESIS, globalLink, type ChainCheckpoint } from "../eventstore/chain.js";
import type { EventStore, RecordedEvent } from "../eventstore/port.js";

export interface ChainBreak {
  position: string;
  stream: string;
  revision: number;
  eventId: string;
  reason: string;
}

export interface VerifyProgress {
  /** Last position checked (decimal string). */
  position: string;
  until: string | null;
  events: number;
}

export interface VerifyOptions {
  /** Start strictly after this position (an earlier verify ended there); default: the start of the log. */
  after?: bigint;
  /** The global chain's value at `after` (what the earlier verify reported); needed to check checkpoints after it. */
  anchor?: string;
  /** Stop at this position (default: the head when the walk starts). */
  until?: bigint;
  /** Events walked before the store's (an archive exported earlier, in position order): see docs/audit.md. */
  prefix?: AsyncIterable<RecordedEvent>;
  pageSize?: number;
  /** Streams whose last hash is kept in memory (default 100 000). */
  streamCache?: number;
  /** Breaks listed in the report (all are counted). */
  maxBreaks?: number;
  onProgress?: (p: VerifyProgress) => void;
}

export interface VerifyReport {
  ok: boolean;
  /** Events checked. */
  events: number;
  /** Of which carried a hash. */
  hashed: number;
  /** Events written before the chain existed (no hash, before its start): not verifiable. */
  unhashed: { count: number; first: string | null; last: string | null };
  /** Global-chain checkpoints compared. */
  checkpoints: number;
  breaks: number;
  /** The first breaks, in log order. */
  firstBreaks: ChainBreak[];
  /** The global chain's value after the last event checked: the anchor of the next `--after` run, or of an archive. */
  chain: { position: string; hash: string } | null;
  until: string | null;
}

type Store = Pick<EventStore, "readAll" | "readStream" | "readCheckpoints" | "headPosition">;

interface Last {
  revision: number;
  hash: string | undefined;
  /** What the hash should have been, when the stored one did not match: the next link may use either. */
  computed?: string;
}

export async function verifyLog(store: Store, options: VerifyOptions = {}): Promise<VerifyReport> {
  const until = options.until ?? (await store.headPosition());
  const w = new Walker(store, options, until);
  if (options.prefix) {
    w.unbounded = true;
    for await (const e of options.prefix) await w.check(e);
    w.unbounded = false;
  }
  const pageSize = options.pageSize ?? 2000;
  let after = w.lastPosition ?? options.after;
  while (until !== undefined && (after === undefined || after < until)) {
    const page = await store.readAll({ after, maxCount: pageSize });
    if (page.length === 0) break;
    for (const e of page) {
      if (e.position > until) break;
      await w.check(e);
    }
    after = page.at(-1)!.position;
    options.onProgress?.({ position: (w.lastPosition ?? 0n).toString(), until: until.toString(), events: w.report.events });
    if (page.length < pageSize) break;
  }
  await w.end();
  return w.report;
}

class Walker {
  readonly report: VerifyReport;
  lastPosition: bigint | undefined;
  /** Remember every stream (an archive: its streams cannot be looked up again). */
  unbounded = false;
  private readonly streams = new Map<string, Last>();
  private readonly maxStreams: number;
  private readonly maxBreaks: number;
  /** Global chain: its value, the checkpoints not reached yet, and where the chain starts. */
  private chain: string | undefined;
  /**
   * The chain with the computed hash in place of a stored one that did not match, while the two
   * differ: a changed event leaves the stored hash right, a changed hash the computed one; the
   * next checkpoint matches one of them, and one change stays one break.
   */
  private alt: string | undefined;
  private pending: ChainCheckpoint[] = [];
  private checkpointsDone = false;
  private nextCheckpointsAfter: bigint | undefined;
  private chainStart: bigint | undefined;
  private genesis = GENESIS;
  private started = false;

  constructor(
    private readonly store: Store,
    private readonly options: VerifyOptions,
    private readonly until: bigint | undefined,
  ) {
    this.maxStreams = options.streamCache ?? 100_000;
    this.maxBreaks = options.maxBreaks ?? 10;
    this.report = {
      ok: true,
      events: 0,
      hashed: 0,
      unhashed: { count: 0, first: null, last: null },
      checkpoints: 0,
      breaks: 0,
      firstBreaks: [],
      chain: null,
      until: until?.toString() ?? null,
    };
  }

  async check(e: RecordedEvent): Promise<void> {
    if (!this.started) await this.start(e.position);
    this.report.events++;
    await this.passCheckpoints(e.position - 1n);
    const prev = await this.previous(e);
    if (prev === "broken") return this.advance(e, e.hash, e.hash);
    if (e.hash === undefined) {
      const chainBegun = this.chainStart !== undefined && e.position > this.chainStart;
      if (chainBegun || prev.hash !== undefined) {
        this.fail(e, chainBegun ? `no hash, though the chain began at position ${this.chainStart}` : "no hash, though the stream's earlier events have one");
      } else {
        const u = this.report.unhashed;
        u.count++;
        u.first ??= e.position.toString();
        u.last = e.position.toString();
      }
      return this.advance(e, undefined, undefined);
    }
    this.report.hashed++;
    let computed: string;
    try {
      computed = eventHash(prev.hash ?? GENESIS, e);
      // After a break in the stream, the link may be to the hash its previous event should have had.
      if (computed !== e.hash && prev.computed !== undefined && eventHash(prev.computed, e) === e.hash) computed = e.hash;
    } catch (err) {
      this.fail(e, `its data cannot be hashed (${(err as Error).message})`);
      return this.advance(e, e.hash, e.hash);
    }
    if (computed !== e.hash) {
      this.fail(e, `stored hash ${e.hash.slice(0, 12)}… differs from the hash of its content and link (${computed.slice(0, 12)}…): the event or its hash was changed`);
    }
    this.advance(e, e.hash, computed);
  }

  async end(): Promise<void> {
    if (this.until !== undefined) await this.passCheckpoints(this.until);
    const left = this.pending.filter((c) => this.until === undefined || c.position <= this.until);
    for (const c of left) {
      if (this.lastPosition === undefined || c.position > this.lastPosition) {
        this.failAt(c.position, `the global chain records position ${c.position}, but the log ends at ${this.lastPosition ?? "nothing"}: events were removed from its end`);
      }
    }
    if (this.chain !== undefined && this.lastPosition !== undefined) this.report.chain = { position: this.lastPosition.toString(), hash: this.chain };
  }

  /** The global chain: where it starts (the store's first checkpoint), and its value at the walk's start. */
  private async start(first: bigint): Promise<void> {
    this.started = true;
    const [genesis] = await this.store.readCheckpoints({ maxCount: 1 });
    this.chainStart = genesis?.position;
    if (genesis === undefined) return;
    this.genesis = genesis.hash;
    const after = this.options.after ?? first - 1n;
    if (after <= genesis.position) {
      this.nextCheckpointsAfter = genesis.position;
      // A log written before the chain: it starts after the event at genesis.position (advance()).
      if (after === genesis.position) this.chain = genesis.hash;
      return;
    }
    // Starting later (--after): the chain's value there is the anchor the caller kept.
    this.nextCheckpointsAfter = after;
    this.chain = this.options.anchor;
  }

  /** Compares the chain with every checkpoint at or before `upTo`. */
  private async passCheckpoints(upTo: bigint): Promise<void> {
    if (this.chainStart === undefined) return;
    for (;;) {
      if (this.pending.length === 0 && !this.checkpointsDone) {
        this.pending = await this.store.readCheckpoints({ after: this.nextCheckpointsAfter, maxCount: 1000 });
        if (this.pending.length === 0) this.checkpointsDone = true;
        else this.nextCheckpointsAfter = this.pending.at(-1)!.position;
      }
      const c = this.pending[0];
      if (!c || c.position > upTo) return;
      this.pending.shift();
      if (this.until !== undefined && c.position > this.until) continue;
      if (this.chain === undefined) continue; // walking from --after without an anchor: nothing to compare yet
      this.report.checkpoints++;
      if (c.hash !== this.chain && c.hash !== this.alt) {
        this.failAt(c.position, `the global chain differs at checkpoint ${c.position}: an event up to there was removed, inserted or reordered (the stream chains did not show which)`);
      }
      // Go on from the stored value, so one change is one break.
      this.chain = c.hash;
      this.alt = undefined;
    }
  }

  /** The stream's previous event as the chain saw it, or "broken" when it is missing. */
  private async previous(e: RecordedEvent): Promise<Last | "broken"> {
    if (e.revision === 0) return { revision: -1, hash: undefined };
    let last = this.streams.get(e.stream);
    if (!last && !this.unbounded) {
      const [p] = await this.store.readStream(e.stream, { fromRevision: e.revision - 1, maxCount: 1 }).catch(() => [] as RecordedEvent[]);
      if (p && p.revision === e.revision - 1 && p.position < e.position) last = { revision: p.revision, hash: p.hash };
    }
    if (!last) {
      this.fail(e, `revision ${e.revision - 1} of the stream is missing`);
      return "broken";
    }
    if (last.revision !== e.revision - 1) {
      this.fail(e, last.revision < e.revision - 1 ? `revisions ${last.revision + 1}..${e.revision - 1} of the stream are missing` : `revision ${e.revision} comes again after revision ${last.revision}`);
      return "broken";
    }
    return last;
  }

  /** Moves past `e`: its stream's last hash (stored, and the computed one when they differ) and the global chain. */
  private advance(e: RecordedEvent, hash: string | undefined, computed: string | undefined): void {
    this.lastPosition = e.position;
    const s = this.streams;
    s.delete(e.stream);
    s.set(e.stream, computed === hash ? { revision: e.revision, hash } : { revision: e.revision, hash, computed });
    if (!this.unbounded && s.size > this.maxStreams) s.delete(s.keys().next().value!);
    if (this.chainStart === undefined) return;
    if (e.position === this.chainStart) this.chain = this.genesis;
    if (e.position <= this.chainStart || this.chain === undefined) return;
    const link = hash ?? safeDigest(e);
    const altLink = computed ?? link;
    if (this.alt !== undefined || altLink !== link) this.alt = globalLink(this.alt ?? this.chain, e.position, altLink);
    this.chain = globalLink(this.chain, e.position, link);
  }

  private fail(e: RecordedEvent, reason: string): void {
    this.record({ position: e.position.toString(), stream: e.stream, revision: e.revision, eventId: e.id, reason });
  }

  private failAt(position: bigint, reason: string): void {
    this.record({ position: position.toString(), stream: "", revision: -1, eventId: "", reason });
  }

  private record(b: ChainBreak): void {
    this.report.ok = false;
    this.report.breaks++;
    if (this.report.firstBreaks.length < this.maxBreaks) this.report.firstBreaks.push(b);
  }
}

/** The content digest, or a marker when the data cannot be hashed (already reported as a break). */
function safeDigest(e: RecordedEvent): string {
  try {
    return contentDigest(e.stream, e);
  } catch {
    return GENESIS;
  }
}

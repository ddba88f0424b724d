/** The walk of audit verify (verify.ts): one event at a time, in log order. */
import { contentDigest, eventHash, GENESIS, type ChainCheckpoint } from "../infra/eventstore/chain.js";
import { ChainWalk } from "./chain-walk.js";
import { matchedHashes } from "./page-hashes.js";
import type { RecordedEvent } from "../infra/eventstore/port.js";
import { foresee, FIRST, StreamMemory, type Last } from "./verify-streams.js";
import type { ChainBreak, VerifiedStore, VerifyOptions, VerifyReport } from "./verify-types.js";

export class Walker {
  readonly report: VerifyReport;
  lastPosition: bigint | undefined;
  /** Remember every stream (an archive: its streams cannot be looked up again). */
  unbounded = false;
  private readonly streams: StreamMemory;
  private readonly maxBreaks: number;
  /** Global chain: its value, the checkpoints not reached yet, and where the chain starts. */
  private readonly chain = new ChainWalk();
  private pending: ChainCheckpoint[] = [];
  private checkpointsDone = false;
  private nextCheckpointsAfter: bigint | undefined;
  private chainStart: bigint | undefined;
  private genesis: ChainCheckpoint = { position: 0n, hash: GENESIS, version: 2 };
  private started = false;
  /** The page being walked (startPage): each event's previous hash as foreseen, and whether its stored hash matched after it. */
  private page: readonly RecordedEvent[] = [];
  private pageAt = 0;
  private pagePrevious: (string | undefined)[] = [];
  private pageMatched: boolean[] = [];
  /** What startPage() found of each page event's stream before the page (undefined: not remembered, or the page's own). */
  private pageKnown: (Last | undefined)[] = [];
  /** What ready() found of `foundFor`'s stream, for the checkNow() right after it: one lookup an event. */
  private found: Last | undefined;
  private foundFor: RecordedEvent | undefined;

  constructor(
    private readonly store: VerifiedStore,
    private readonly options: VerifyOptions,
    private readonly until: bigint | undefined,
  ) {
    this.streams = new StreamMemory(options.streamCache ?? 100_000);
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

  /** Checks `e`; returns a promise only when something had to be read first (most events need nothing). */
  check(e: RecordedEvent): Promise<void> | undefined {
    if (this.ready(e)) {
      this.checkNow(e);
      return undefined;
    }
    return this.prepare(e).then(() => {
      this.foundFor = undefined; // prepare() may have read the stream's last hash back
      this.checkNow(e);
    });
  }

  /**
   * Before checking a page's events, in order: hashes them in one go (page-hashes.ts), each after
   * the previous hash of its stream as far as it can be foreseen (the page's own events, then what
   * the walk remembers). checkNow uses a result only when that was the previous hash it found.
   */
  startPage(page: readonly RecordedEvent[]): void {
    const { previous, known } = foresee(page, this.started ? this.streams : undefined);
    this.page = page;
    this.pageAt = 0;
    this.pagePrevious = previous;
    this.pageKnown = known;
    this.pageMatched = matchedHashes(page, previous);
  }

  /** Whether `e` can be checked with what is in memory: the walk started, its checkpoints loaded, its stream's last hash known. */
  private ready(e: RecordedEvent): boolean {
    if (!this.started) return false;
    if (this.chainStart !== undefined && !this.checkpointsDone && (this.pending.length === 0 || this.pending.at(-1)!.position < e.position)) return false;
    if (e.revision === 0 || this.unbounded) return true;
    this.foundFor = e;
    // The stream's first event in the page: what startPage() found (the walk has not touched the stream since).
    const k = this.pageAt;
    this.found = (this.page[k] === e ? this.pageKnown[k] : undefined) ?? this.streams.known(e.stream);
    return this.found !== undefined;
  }

  private async prepare(e: RecordedEvent): Promise<void> {
    if (!this.started) await this.start(e.position);
    while (this.chainStart !== undefined && !this.checkpointsDone && (this.pending.length === 0 || this.pending.at(-1)!.position < e.position)) {
      const more = await this.store.readCheckpoints({ after: this.nextCheckpointsAfter, maxCount: 1000 });
      if (more.length === 0) this.checkpointsDone = true;
      else {
        this.pending.push(...more);
        this.nextCheckpointsAfter = more.at(-1)!.position;
      }
    }
    if (e.revision > 0 && !this.unbounded && this.streams.known(e.stream) === undefined) {
      // Not remembered (an earlier range, or forgotten): read the stream's previous event back.
      const [p] = await this.store.readStream(e.stream, { fromRevision: e.revision - 1, maxCount: 1 }).catch(() => [] as RecordedEvent[]);
      if (p && p.revision === e.revision - 1 && p.position < e.position) this.streams.readBack(e.stream, { revision: p.revision, hash: p.hash });
    }
  }

  private checkNow(e: RecordedEvent): void {
    const k = this.page[this.pageAt] === e ? this.pageAt++ : -1;
    this.report.events++;
    if (this.pending.length > 0 && this.pending[0]!.position < e.position) this.passCheckpoints(e.position - 1n);
    const prev = this.previous(e);
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
    const previous = prev.hash ?? GENESIS;
    if (k >= 0 && this.pageMatched[k] && this.pagePrevious[k] === previous) return this.advance(e, e.hash, e.hash);
    let computed: string;
    try {
      computed = eventHash(previous, e);
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
    if (this.until !== undefined) {
      await this.prepare({ position: this.until + 1n, revision: 0, stream: "" } as RecordedEvent);
      this.passCheckpoints(this.until);
    }
    const left = this.pending.filter((c) => this.until === undefined || c.position <= this.until);
    for (const c of left) {
      if (this.lastPosition === undefined || c.position > this.lastPosition) {
        this.failAt(c.position, `the global chain records position ${c.position}, but the log ends at ${this.lastPosition ?? "nothing"}: events were removed from its end`);
      }
    }
    const value = this.chain.value();
    if (value !== undefined && this.lastPosition !== undefined) this.report.chain = { position: this.lastPosition.toString(), hash: value };
  }

  /**
   * Starts a walk after `after` (--after); returns the position to read after. That is `after`,
   * but for an anchor inside a version 2 segment: the chain's value there depends on the segment's
   * events before it, so the walk starts at the segment's checkpoint (fewer than an interval of
   * events earlier) and compares the anchor when it reaches `after`.
   */
  async startAfter(after: bigint): Promise<bigint> {
    await this.start(after + 1n);
    const anchor = this.options.anchor;
    if (this.chainStart === undefined || after <= this.chainStart || anchor === undefined) return after;
    const c = await this.segmentStart(after);
    if (c.version === 1 || c.position === after) {
      this.chain.restart(anchor, c.position === after ? c.version : 1);
      return after;
    }
    this.chain.restart(c.hash, 2);
    this.pending = [{ position: after, hash: anchor, version: 2, head: true }];
    this.nextCheckpointsAfter = c.position;
    return c.position;
  }

  /** The global chain: where it starts (the store's first checkpoint), and its value at the walk's start. */
  private async start(first: bigint): Promise<void> {
    this.started = true;
    const [genesis] = await this.store.readCheckpoints({ maxCount: 1 });
    this.chainStart = genesis?.position;
    if (genesis === undefined) return;
    this.genesis = genesis;
    const after = this.options.after ?? first - 1n;
    if (after <= genesis.position) {
      this.nextCheckpointsAfter = genesis.position;
      // A log written before the chain: it starts after the event at genesis.position (advance()).
      if (after === genesis.position) this.chain.restart(genesis.hash, genesis.version);
      return;
    }
    // Starting later (--after): the chain's value there is the anchor the caller kept (startAfter).
    // A checkpoint stored at that very position (the head then, or an interval's) is compared with
    // it too, so a wrong anchor is caught even when nothing was appended since.
    this.nextCheckpointsAfter = this.options.anchor === undefined ? after : after - 1n;
  }

  /** The last stored checkpoint at or before `position` (not the head): where its segment starts. */
  private async segmentStart(position: bigint): Promise<ChainCheckpoint> {
    const [at] = await this.store.readCheckpoints({ after: position - 1n, maxCount: 1 });
    if (at && at.position === position && !at.head) return at;
    let best = this.genesis;
    for (let after: bigint | undefined; ; ) {
      const page = await this.store.readCheckpoints({ after, maxCount: 1000 });
      for (const c of page) {
        if (c.position > position) return best;
        if (!c.head) best = c;
      }
      if (page.length < 1000) return best;
      after = page.at(-1)!.position;
    }
  }

  /** Compares the chain with every checkpoint at or before `upTo` (prepare() loaded them). */
  private passCheckpoints(upTo: bigint): void {
    if (this.chainStart === undefined) return;
    for (;;) {
      const c = this.pending[0];
      if (!c || c.position > upTo) return;
      this.pending.shift();
      if (this.until !== undefined && c.position > this.until) continue;
      // Unknown when walking from --after without an anchor: nothing to compare yet.
      const matched = !this.chain.known || this.chain.matches(c.hash);
      if (this.chain.known) this.report.checkpoints++;
      if (!matched) {
        this.failAt(c.position, `the global chain differs at checkpoint ${c.position}: an event up to there was removed, inserted or reordered, or the checkpoint was changed (the stream chains did not show which)`);
      }
      this.chain.pass(c, matched);
    }
  }

  /** The stream's previous event as the chain saw it (prepare() read it back if need be), or "broken" when it is missing. */
  private previous(e: RecordedEvent): Last | "broken" {
    if (e.revision === 0) return FIRST;
    const last = this.foundFor === e ? this.found : this.streams.known(e.stream);
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
    const last: Last = computed === hash ? { revision: e.revision, hash } : { revision: e.revision, hash, computed };
    this.streams.walked(e.stream, last, this.unbounded);
    if (this.chainStart === undefined) return;
    if (e.position === this.chainStart) this.chain.restart(this.genesis.hash, this.genesis.version);
    if (e.position <= this.chainStart || !this.chain.known) return;
    const link = hash ?? safeDigest(e);
    this.chain.add(e.position, link, computed ?? link);
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

/**
 * Snapshots of the in-memory read models (embedded mode), so that a restart reads only the events
 * after them instead of the whole log. One file a projection, `<dir>/<name>.snapshot`
 * (snapshot-file.ts: write-then-rename, a checksum), holding the model's keys, its checkpoint and
 * its origin (the log's first event and the event at the checkpoint).
 *
 * - At start, `load()` puts each snapshot that reads back whole into the memory store, checkpoint
 *   and origin included. A snapshot refused here (torn, corrupt, another format or version, another
 *   model) is logged and left out: that model is rebuilt from the log. Whether a loaded snapshot is
 *   THIS log's is the projector's check, the one every store that outlives the process gets
 *   (src/reactors/projector/log-origin.ts): a model of another log, or of an older copy of this one,
 *   is logged, not served, and rebuilt.
 * - While running, a timer looks every interval for models worth writing again: one never written
 *   that has a checkpoint, or one whose writes since its last snapshot reach `REWRITE_SHARE` of the
 *   keys that snapshot held, or whose last snapshot is `MAX_AGE_INTERVALS` intervals old and moved
 *   since. Writing a model costs its whole size, so a large model that changes a little (a fleet of
 *   hosts whose reports change nothing, a boot storm moving a few keys) is not rewritten every
 *   interval: the cost follows what changed, not the fleet's size, and a restart after a crash reads
 *   at most the log behind that share of the model (or those intervals). The model is taken
 *   copy-on-write (memory-capture.ts: its content matches its checkpoint) and written while the
 *   service goes on taking writes.
 *   `close()` writes every model that moved, after the projector stopped.
 * - Once the service serves, `settleLoaded()` takes the keys still in the loaded snapshots' bytes
 *   out of them in the background, paced as the interval writes are (MemoryReadStore.settleLoaded),
 *   so the files' buffers are freed and the service's memory stays flat instead of growing as the
 *   fleet uses keys. The large keys (an index over every device) go first: their first use, a
 *   write on a request's path, would otherwise parse megabytes.
 *
 * One process at a time writes the directory (dir-owner.ts); another server on the same DATA_DIR
 * neither loads nor writes snapshots.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { DutyCycle, type Pacing, type StoppablePacing } from "../duty-cycle.js";
import type { Logger } from "../logger.js";
import { releaseOwnership, takeOwnership } from "./dir-owner.js";
import type { CapturedModel, MemoryReadStore } from "./memory.js";
import type { ModelCapture } from "./memory-capture.js";
import { entryLine } from "./snapshot-lines.js";
import { ChecksumThread } from "./checksum-thread.js";
import { readSnapshotBytes, writeSnapshot, type SnapshotBody, type SnapshotBytesRead, type SnapshotHeader, type SnapshotLine } from "./snapshot-file.js";

export const SNAPSHOT_FORMAT = "cyborg-es read model";
/**
 * Raised whenever the file's layout changes; a projection's own changes are told by its `layout`.
 * 2: sorted sets, like hashes, are kept as their text until first used (lines as in 1).
 * 3: a hash's content is the JSON object of its fields, `["h",<key>,{"field":value,...}]`, as the
 *    store keeps it (a list of `[field, json]` before).
 */
export const SNAPSHOT_FORMAT_VERSION = 3;
/** A model is written again once the writes since its last snapshot reach this share of the keys that snapshot held. */
export const REWRITE_SHARE = 0.1;
/** ... or once its last snapshot is this many intervals old, if it moved since. */
export const MAX_AGE_INTERVALS = 30;

/** What the last snapshot of a model held, to tell when it is worth writing again. */
interface Written {
  checkpoint: bigint;
  /** The store's write count of the model when it was taken (MemoryReadStore.writesTo). */
  writes: number;
  keys: number;
  at: number;
}

export interface ReadModelSnapshotsOptions {
  store: MemoryReadStore;
  dir: string;
  /**
   * The projections kept in `store`, each with a fingerprint of the code that builds it: a snapshot
   * written by other code (an upgrade) is refused, and that model rebuilt once.
   */
  projections: ReadonlyArray<{ name: string; layout: string }>;
  /** How often models that moved are written (0: only at close). */
  intervalMs: number;
  log: Pick<Logger, "info" | "warn" | "error">;
  /** How those interval writes are paced (default: a quarter of the main thread at most, `BACKGROUND_SHARE`). */
  pacing?: () => StoppablePacing;
}

/**
 * The share of the main thread a snapshot written at the interval takes at most: writing 10,000
 * hosts' models is seconds of the thread's time (their text, its bytes, its checksum), which
 * requests would otherwise queue behind. Writes at close go at full speed.
 */
export const BACKGROUND_SHARE = 0.25;

export class ReadModelSnapshots {
  private timer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private readonly written = new Map<string, Written>();
  private owned = false;
  /** The pacing of the interval write under way, if any. */
  private pacing?: StoppablePacing;
  /** Whether any snapshot was loaded (its keys are then taken out of its bytes by `settleLoaded`). */
  private loadedAny = false;
  private settling?: { done: Promise<void>; pacing: StoppablePacing; stopped: boolean };

  constructor(private readonly o: ReadModelSnapshotsOptions) {}

  /** Whether this process holds the directory (after load): only then may it write snapshots there. */
  get owns(): boolean {
    return this.owned;
  }

  /** Takes the directory and loads every snapshot that reads back whole; the names loaded (none when another process holds the directory). */
  async load(): Promise<string[]> {
    await mkdir(this.o.dir, { recursive: true });
    this.owned = await takeOwnership(this.o.dir);
    if (!this.owned) {
      this.o.log.warn({ dir: this.o.dir }, `another process writes read-model snapshots into ${this.o.dir}: this one rebuilds its models from the log and writes none`);
      return [];
    }
    const loaded: string[] = [];
    // Every file is read at once (node's I/O threads) and checked on a thread of its own, each decoded
    // here as soon as the one before is, and put into the store once its check has passed.
    const thread = new ChecksumThread();
    const reads = this.o.projections.map((p) => readSnapshotBytes(this.fileOf(p.name), { format: SNAPSHOT_FORMAT, version: SNAPSHOT_FORMAT_VERSION, name: p.name, layout: p.layout }, thread));
    for (const r of reads) r.catch(() => undefined); // a failed read is reported where it is awaited, not as an unhandled rejection
    try {
      for (const [i, p] of this.o.projections.entries()) if (await this.loadOne(p.name, reads[i]!)) loaded.push(p.name);
    } finally {
      await thread.close();
    }
    return loaded;
  }

  /** Puts one model's snapshot into the store once decoded and checked; whether it did. */
  private async loadOne(name: string, reading: Promise<SnapshotBytesRead | undefined>): Promise<boolean> {
    const t0 = performance.now();
    const file = this.fileOf(name);
    const read = await reading;
    if (read === undefined) return false;
    // Decoded while the thread checks the bytes; used only once the check passed.
    let model = read.ok ? decodedOrWhy(read.header, read.body) : read.reason;
    if (read.ok) model = (await read.verified) ?? model;
    if (typeof model === "string") {
      this.o.log.warn({ projection: name, file, reason: model }, `the ${name} read-model snapshot is refused (${model}): rebuilding that model from the log`);
      return false;
    }
    this.o.store.restore(name, model);
    this.loadedAny = true;
    this.written.set(name, { checkpoint: model.checkpoint, writes: this.o.store.writesTo(name), keys: model.hashes.length + model.zsets.length, at: Date.now() });
    this.o.log.info({ projection: name, checkpoint: model.checkpoint.toString(), keys: model.hashes.length + model.zsets.length, ms: Math.round(performance.now() - t0) }, "read model loaded from its snapshot");
    return true;
  }

  /** Writes the models that moved every `intervalMs` from now on. */
  start(): void {
    if (!this.owned || this.o.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.writeDue(), this.o.intervalMs);
    this.timer.unref();
  }

  /** Writes a snapshot of each model worth writing again (see the file's comment; one run at a time): what the timer runs. */
  async writeDue(): Promise<void> {
    // A paced write can outlast the interval: the next tick leaves it be.
    if (this.writing) return;
    const pacing = (this.o.pacing ?? (() => new DutyCycle(BACKGROUND_SHARE)))();
    return this.run((name, last) => this.due(name, last), pacing);
  }

  /** Writes a snapshot of each model whose checkpoint moved since its last one (one run at a time). */
  async writeMoved(): Promise<void> {
    return this.run(() => true);
  }

  /** Stops the timer, writes what moved since (call it after the projector stopped), and gives the directory back. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.settling) {
      this.settling.stopped = true;
      this.settling.pacing.hurry();
      await this.settling.done;
    }
    // An interval write under way finishes at full speed.
    this.pacing?.hurry();
    if (!this.owned) return;
    await this.writeMoved();
    await releaseOwnership(this.o.dir);
    this.owned = false;
  }

  private async run(wanted: (name: string, last: Written) => boolean, pacing?: StoppablePacing): Promise<void> {
    if (!this.owned) return;
    while (this.writing) await this.writing;
    this.pacing = pacing;
    this.writing = this.writeEach(wanted, pacing).finally(() => {
      this.writing = undefined;
      this.pacing = undefined;
    });
    return this.writing;
  }

  /**
   * Takes the keys still in the loaded snapshots' bytes out of them in the background, paced as the
   * interval writes are (call it once the service serves: it would slow the start down).
   */
  settleLoaded(): void {
    if (!this.loadedAny || this.settling) return;
    const pacing = (this.o.pacing ?? (() => new DutyCycle(BACKGROUND_SHARE)))();
    const t0 = performance.now();
    const settling = { pacing, stopped: false, done: Promise.resolve() };
    settling.done = this.o.store.settleLoaded(pacing, () => settling.stopped).then(
      (keys) => {
        if (!settling.stopped) this.o.log.info({ keys, ms: Math.round(performance.now() - t0) }, "read models loaded from snapshots: every key taken out of the files' bytes, which are freed");
      },
      (err: unknown) => this.o.log.error({ err }, "could not take the loaded read models' keys out of their snapshots' bytes; each is taken out when first used"),
    );
    this.settling = settling;
  }

  /** Whether a model that moved since its last snapshot is worth writing again now. */
  private due(name: string, last: Written): boolean {
    const changed = this.o.store.writesTo(name) - last.writes;
    return changed >= Math.max(1, last.keys * REWRITE_SHARE) || Date.now() - last.at >= this.o.intervalMs * MAX_AGE_INTERVALS;
  }

  private async writeEach(wanted: (name: string, last: Written) => boolean, pace?: Pacing): Promise<void> {
    for (const p of this.o.projections) {
      // Taken only when it moved: a model loaded from its snapshot and not changed since is not written again.
      const checkpoint = await this.o.store.getCheckpoint(p.name);
      const last = this.written.get(p.name);
      if (checkpoint === undefined || last?.checkpoint === checkpoint || (last && !wanted(p.name, last))) continue;
      const model = this.o.store.openCapture(p.name);
      if (model === undefined) continue;
      if (model.origin === undefined || this.written.get(p.name)?.checkpoint === model.checkpoint) {
        model.lines().return(undefined); // closes it
        continue;
      }
      const writes = this.o.store.writesTo(p.name);
      const t0 = performance.now();
      try {
        const header = { format: SNAPSHOT_FORMAT, version: SNAPSHOT_FORMAT_VERSION, name: p.name, checkpoint: model.checkpoint.toString(), origin: model.origin, layout: p.layout };
        await writeSnapshot(this.fileOf(p.name), header, encode(model), pace);
        this.written.set(p.name, { checkpoint: model.checkpoint, writes, keys: model.keys, at: Date.now() });
        this.o.log.info({ projection: p.name, checkpoint: header.checkpoint, ms: Math.round(performance.now() - t0) }, "read-model snapshot written");
      } catch (err) {
        this.o.log.error({ err, projection: p.name }, "could not write the read-model snapshot; the next start reads more of the log");
      }
    }
  }

  private fileOf(name: string): string {
    return join(this.o.dir, `${name}.snapshot`);
  }
}

function* encode(model: ModelCapture): Generator<SnapshotLine> {
  for (const [kind, key, content] of model.lines()) yield entryLine(kind, key, content);
}

/** The model, or why the bytes are not one (they may not have been checked yet: decode fails on nothing). */
function decodedOrWhy(header: SnapshotHeader, body: SnapshotBody): CapturedModel | string {
  try {
    return decode(header, body);
  } catch (err) {
    return `an entry cannot be read (${(err as Error).message})`;
  }
}

/**
 * The model a checked snapshot holds, or why it cannot be one. Only the keys are read: each key's
 * content stays its bytes in the file's buffer until the service first uses it (memory.ts).
 */
function decode(header: SnapshotHeader, body: SnapshotBody): CapturedModel | string {
  const model: CapturedModel = { checkpoint: BigInt(header.checkpoint), origin: header.origin, hashes: [], zsets: [] };
  const { bytes } = body;
  for (let at = body.start; at < body.end; ) {
    const nl = bytes.indexOf(0x0a, at);
    if (!rawEntryInto(model, bytes, at, nl)) {
      const entry = parsedEntry(bytes.toString("utf8", at, nl));
      if (typeof entry === "string") return entry;
      if (entry[0] === "h") model.hashes.push([entry[1], JSON.stringify(entry[2])]);
      else model.zsets.push([entry[1], entry[2] as never[]]);
    }
    at = nl + 1;
  }
  return model;
}

type Entry = [kind: "h" | "z", key: string, content: object];

const [QUOTE, COMMA, OPEN, CLOSE, OPEN_OBJECT, CLOSE_OBJECT, BACKSLASH, H, Z] = [0x22, 0x2c, 0x5b, 0x5d, 0x7b, 0x7d, 0x5c, 0x68, 0x7a];

/**
 * Puts the line `bytes[start, end)` into `model` when it is `["h",<key>,{...}]` or
 * `["z",<key>,[...]]`: its key and the place of its content (no list per line: a restart reads
 * some 170,000 of them); false for any other line (then parsed whole). The file's checksum
 * vouches for the bytes; the key is read as a JSON string (with its escapes).
 */
function rawEntryInto(model: CapturedModel, bytes: Buffer, start: number, end: number): boolean {
  const kind = bytes[start + 2];
  const opens = bytes[start] === OPEN && bytes[start + 1] === QUOTE && bytes[start + 3] === QUOTE && bytes[start + 4] === COMMA && bytes[start + 5] === QUOTE;
  if (!opens || (kind !== H && kind !== Z)) return false;
  let q = start + 6;
  let escaped = false;
  for (; q < end; q++) {
    const c = bytes[q];
    if (c === BACKSLASH) {
      escaped = true;
      q++; // the escaped character
    } else if (c === QUOTE) break;
  }
  const [opening, closing] = kind === H ? [OPEN_OBJECT, CLOSE_OBJECT] : [OPEN, CLOSE];
  if (q + 3 > end - 2 || bytes[q + 1] !== COMMA || bytes[q + 2] !== opening || bytes[end - 1] !== CLOSE || bytes[end - 2] !== closing) return false;
  const key = escaped ? (JSON.parse(bytes.toString("utf8", start + 5, q + 1)) as string) : bytes.toString("utf8", start + 6, q);
  (kind === H ? model.hashes : model.zsets).push([key, { bytes, start: q + 2, end: end - 1 }]);
  return true;
}

/** A line that is not in the shape `rawEntry` reads, parsed whole; or why it is refused. */
function parsedEntry(line: string): Entry | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "an entry is not JSON";
  }
  const [kind, key, content] = Array.isArray(value) ? value : [];
  if (kind !== "h" && kind !== "z") return `it holds an entry of unknown kind ${JSON.stringify(kind)}`;
  const fits = kind === "h" ? typeof content === "object" && content !== null && !Array.isArray(content) : Array.isArray(content);
  if (typeof key !== "string" || !fits) return "an entry is not a key and its content";
  return [kind, key, content as object];
}

/**
 * Snapshots of what a reactor folded from the log (the binder's binds in flight, the invariant
 * checker's index), so that a restart reads only the log after them instead of folding it from
 * its start. One file a reactor, `<dir>/<name>.state`, in the snapshot-file format (write-then-
 * rename, a checksum), holding the position and event id it reflects and the log's first event.
 *
 * A snapshot is used only when it reads back whole, is of this reactor's format `version`, and is
 * of THIS log at its checkpoint (log-origin.ts: the log's first event, and the event at the
 * checkpoint, are the ones it names); otherwise it is refused with a log line and the reactor
 * folds the whole log, as it did before snapshots.
 */
import { join } from "node:path";
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import { readSnapshot, writeSnapshot } from "../../infra/readstore/snapshot-file.js";
import { LogOrigin } from "../projector/log-origin.js";

const FORMAT = "cyborg-es follower state";
const FORMAT_VERSION = 1;

/** What a reactor puts in its snapshot and takes back from it. */
export interface FoldedState {
  /** The state as lines (JSON values), taken at once, between two events. */
  lines(): string[];
  /** Puts back what `lines()` gave (into an empty state). */
  restore(lines: readonly string[]): void;
}

export interface StateSnapshotsOptions {
  dir: string;
  events: EventStore;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** How often each reactor writes its state when it moved (0: only at stop). */
  intervalMs: number;
}

export class StateSnapshots {
  private readonly origin: LogOrigin;

  constructor(readonly o: StateSnapshotsOptions) {
    this.origin = new LogOrigin(o.events);
  }

  /**
   * Loads `name`'s snapshot into `state` if it can be trusted; the position it reflects (the
   * reactor reads on after it), or undefined (refused or none: fold the log from its start).
   * `version`: the reactor's own, raised whenever what it folds changes meaning.
   */
  async load(name: string, version: number, state: FoldedState): Promise<bigint | undefined> {
    const file = this.fileOf(name);
    const read = await readSnapshot(file, { format: FORMAT, version: FORMAT_VERSION, name, layout: String(version) });
    if (read === undefined) return undefined;
    let reason = read.ok ? undefined : read.reason;
    if (read.ok) {
      const checkpoint = BigInt(read.header.checkpoint);
      const [why] = await this.origin.foreign([{ checkpoint, origin: read.header.origin }], await this.o.events.headPosition());
      reason = why && `it is not this log's: ${why}`;
      if (reason === undefined) {
        try {
          state.restore(read.lines);
          this.o.log.info({ follower: name, checkpoint: read.header.checkpoint }, "state loaded from its snapshot; reading the log after it");
          return checkpoint;
        } catch (err) {
          reason = `its content cannot be read back (${(err as Error).message})`;
        }
      }
    }
    this.o.log.warn({ follower: name, file, reason }, `the ${name} state snapshot is refused (${reason}): reading the whole log`);
    return undefined;
  }

  /** Writes `name`'s state as of `at` (the last event it applied). */
  async save(name: string, version: number, at: Pick<RecordedEvent, "id" | "position">, lines: readonly string[]): Promise<void> {
    const origin = await this.origin.of(at);
    await writeSnapshot(this.fileOf(name), { format: FORMAT, version: FORMAT_VERSION, name, checkpoint: at.position.toString(), origin, layout: String(version) }, lines);
  }

  private fileOf(name: string): string {
    return join(this.o.dir, `${name}.state`);
  }
}

/**
 * Writes a reactor's state every `intervalMs` when it moved, and once more at stop. `last` is the
 * last event the reactor applied; `capture` takes its state at once (between two events).
 */
export class StateWriter {
  private timer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private written?: bigint;

  constructor(
    private readonly snapshots: StateSnapshots,
    private readonly name: string,
    private readonly version: number,
    private readonly last: () => Pick<RecordedEvent, "id" | "position"> | undefined,
    private readonly capture: () => string[],
  ) {}

  /** Counts `from` as written already (the snapshot just loaded). */
  start(from: bigint | undefined): void {
    this.written = from;
    if (this.snapshots.o.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.write(), this.snapshots.o.intervalMs);
    this.timer.unref();
  }

  async write(): Promise<void> {
    while (this.writing) await this.writing;
    const at = this.last();
    if (at === undefined || at.position === this.written) return;
    const lines = this.capture();
    this.writing = this.snapshots
      .save(this.name, this.version, at, lines)
      .then(() => void (this.written = at.position))
      .catch((err) => this.snapshots.o.log.error({ err, follower: this.name }, "could not write the state snapshot; the next start reads more of the log"))
      .finally(() => (this.writing = undefined));
    return this.writing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.write();
  }
}

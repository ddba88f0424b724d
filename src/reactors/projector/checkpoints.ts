/**
 * Checkpoints in the read store. Every write names the checkpoint it expects, so a store that lost
 * its data (Redis restarted empty, FLUSHALL: the `{name}:@meta` marker is gone) is noticed, and one
 * that went back to an older checkpoint of this log (a restored snapshot) is resumed from it. Each
 * checkpoint carries its origin (log-origin.ts): a model built from another log (a fresh or
 * restored log, another deployment's) is unmarked at once and treated as lost: rebuilt from this log.
 */
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import { CheckpointMismatchError, type ReadStore, type Stamp } from "../../infra/readstore/port.js";
import { LogOrigin } from "./log-origin.js";
import type { Slot, Slots } from "./slots.js";

export interface CheckpointLogger {
  warn(obj: object, msg: string): void;
}

export class Checkpoints {
  readonly origin: LogOrigin;

  constructor(
    private readonly store: ReadStore,
    private readonly events: EventStore,
    private readonly slots: Slots,
    private readonly log: CheckpointLogger,
    /** A slot was moved to the store's checkpoint: the log must be read again from there. */
    private readonly moved: (s: Slot) => void,
  ) {
    this.origin = new LogOrigin(events);
  }

  /** Loads every slot's checkpoint, by name; `foreign`: the models of another log (unmarked, to rebuild, from nothing). */
  async load(head: bigint | undefined): Promise<{ checkpoints: Map<string, bigint | undefined>; foreign: Slot[] }> {
    const stamps = await this.store.getStamps(this.slots.names);
    const why = await this.origin.foreign(stamps, head);
    const foreign: Slot[] = [];
    for (const [i, s] of this.slots.all.entries()) {
      s.failed = undefined;
      const stamp = why[i] === undefined ? stamps[i] : undefined;
      s.processed = s.stored = stamp?.checkpoint;
      s.processedEvent = s.storedEvent = stamp?.origin?.event;
      if (why[i] !== undefined) foreign.push(await this.notOurs(s, stamps[i]!, why[i]!));
    }
    return { checkpoints: new Map(this.slots.all.map((s) => [s.projection.name, s.stored])), foreign };
  }

  /** Commits writes with the slot's checkpoint moved to `at`, guarded by the one it expects. */
  async commit(s: Slot, writes: Parameters<ReadStore["applyBatch"]>[1], at: Pick<RecordedEvent, "id" | "position">): Promise<void> {
    await this.store.applyBatch(s.projection.name, writes, at.position, s.stored ?? null, await this.origin.of(at));
    s.stored = s.processed = at.position;
    s.storedEvent = s.processedEvent = at.id;
  }

  /** Saves the checkpoints moved without writes; returns the slots whose store lost them (or holds another log's). */
  async save(): Promise<Slot[]> {
    const suspects: Slot[] = [];
    await Promise.all(
      this.slots.all.map(async (s) => {
        if (s.failed || s.processed === undefined || (s.stored !== undefined && s.stored >= s.processed)) return;
        try {
          await this.commit(s, [], { position: s.processed, id: s.processedEvent! });
        } catch (err) {
          if (err instanceof CheckpointMismatchError) suspects.push(s);
          else throw err;
        }
      }),
    );
    return suspects.length ? this.lost() : [];
  }

  /**
   * Every running slot whose stamp in the store is not the one the projector left: gone (lost),
   * another log's (unmarked, and lost), or an older one of this log (resumed from it).
   */
  async lost(): Promise<Slot[]> {
    const stamps = await this.store.getStamps(this.slots.names);
    const changed = this.slots.all.filter((s, i) => !s.failed && (stamps[i]?.checkpoint !== s.stored || stamps[i]?.origin?.event !== s.storedEvent));
    if (changed.length === 0) return [];
    const at = changed.map((s) => stamps[this.slots.all.indexOf(s)]);
    const why = await this.origin.foreign(at, await this.events.headPosition());
    const lost: Slot[] = [];
    for (const [i, s] of changed.entries()) {
      const stamp = at[i];
      if (stamp === undefined) lost.push(s);
      else if (why[i] !== undefined) lost.push(await this.notOurs(s, stamp, why[i]!));
      else this.resume(s, stamp);
    }
    return lost;
  }

  private resume(s: Slot, stamp: Stamp): void {
    this.log.warn({ projection: s.projection.name, expected: s.stored?.toString(), actual: stamp.checkpoint.toString() }, "checkpoint moved under the projector; resuming from it");
    s.stored = s.processed = stamp.checkpoint;
    s.storedEvent = s.processedEvent = stamp.origin?.event;
    this.moved(s);
  }

  /** A model of another log: readers lose it now; the caller rebuilds it. */
  private async notOurs(s: Slot, stamp: Stamp, why: string): Promise<Slot> {
    const name = s.projection.name;
    this.log.warn(
      { projection: name, storeLog: stamp.origin?.log ?? null, storeCheckpoint: stamp.checkpoint.toString(), log: (await this.origin.identity()) ?? null, reason: why },
      `the ${name} read model in the store is not this log's (${why}); not serving it, and rebuilding it from this log`,
    );
    s.serving = false;
    await this.store.unmarkServing(name);
    return s;
  }
}

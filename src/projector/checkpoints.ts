/**
 * Checkpoints in the read store. Every write names the checkpoint it expects, so a store that lost
 * its data (Redis restarted empty, FLUSHALL: the `{name}:@meta` marker is gone) is noticed, and one
 * that went back to an older checkpoint (another writer, a restored snapshot) is resumed from it.
 */
import { CheckpointMismatchError, type ReadStore } from "../readstore/port.js";
import type { Slot, Slots } from "./slots.js";

export interface CheckpointLogger {
  warn(obj: object, msg: string): void;
}

export class Checkpoints {
  constructor(
    private readonly store: ReadStore,
    private readonly slots: Slots,
    private readonly log: CheckpointLogger,
    /** A slot was moved to the store's checkpoint: the log must be read again from there. */
    private readonly moved: (s: Slot) => void,
  ) {}

  /** Loads every slot's checkpoint; returns them by name. */
  async load(): Promise<Map<string, bigint | undefined>> {
    const cps = await this.store.getCheckpoints(this.slots.names);
    this.slots.all.forEach((s, i) => {
      s.processed = s.stored = cps[i];
      s.failed = undefined;
    });
    return new Map(this.slots.names.map((n, i) => [n, cps[i]]));
  }

  /** Commits writes with the slot's checkpoint moved to `position`, guarded by the one it expects. */
  async commit(s: Slot, writes: Parameters<ReadStore["applyBatch"]>[1], position: bigint): Promise<void> {
    await this.store.applyBatch(s.projection.name, writes, position, s.stored ?? null);
    s.stored = s.processed = position;
  }

  /** Saves the checkpoints moved without writes; returns the slots whose store lost them. */
  async save(): Promise<Slot[]> {
    const lost: Slot[] = [];
    await Promise.all(
      this.slots.all.map(async (s) => {
        if (s.failed || s.processed === undefined || (s.stored !== undefined && s.stored >= s.processed)) return;
        try {
          await this.commit(s, [], s.processed);
        } catch (err) {
          if (err instanceof CheckpointMismatchError) this.mismatch(s, err, lost);
          else throw err;
        }
      }),
    );
    return lost;
  }

  /** `known` plus every running slot whose marker is gone from the store; adopts checkpoints that moved. */
  async lost(known: readonly Slot[]): Promise<Slot[]> {
    const cps = await this.store.getCheckpoints(this.slots.names);
    const lost = [...known];
    this.slots.all.forEach((s, i) => {
      const actual = cps[i];
      if (s.failed || lost.includes(s) || actual === s.stored) return;
      if (actual === undefined) lost.push(s);
      else this.mismatch(s, new CheckpointMismatchError(s.projection.name, s.stored, actual, actual), lost);
    });
    return lost;
  }

  /** A store without the slot's checkpoint lost its data (added to `lost`); one at another checkpoint is resumed from it. */
  mismatch(s: Slot, err: CheckpointMismatchError, lost: Slot[]): void {
    if (err.actual === undefined) {
      lost.push(s);
      return;
    }
    this.log.warn({ projection: s.projection.name, expected: s.stored?.toString(), actual: err.actual.toString() }, "checkpoint moved under the projector; resuming from it");
    s.stored = s.processed = err.actual;
    this.moved(s);
  }
}

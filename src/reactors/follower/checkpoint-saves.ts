/**
 * A log follower's checkpoint as it records it, through its keeper (checkpoint.ts): the position
 * last loaded or saved and, in the "event-log" mode, what was handled and not saved yet, due to be
 * saved `coalesceMs` after the last save.
 */
import type { Write } from "../../infra/readstore/port.js";
import type { FollowerCheckpoint, StoredCheckpoint } from "./checkpoint.js";

export class CheckpointSaves {
  /** The stored checkpoint, as last loaded or saved. */
  position: bigint | undefined;
  /** "event-log": handled and not saved yet (the next save's position); when the last save was. */
  private unsaved: bigint | undefined;
  private savedAt = 0;

  constructor(
    private readonly keeper: FollowerCheckpoint,
    private readonly coalesceMs: number,
    /** The handler's state to save with the checkpoint (taken at each save). */
    private readonly snapshot: () => unknown,
  ) {}

  get where(): FollowerCheckpoint["where"] {
    return this.keeper.where;
  }

  load(): Promise<StoredCheckpoint> {
    return this.keeper.load();
  }

  /** The follower (re)starts from `position`, the one loaded: nothing is waiting to be saved. */
  restartAt(position: bigint | undefined): void {
    this.position = position;
    this.unsaved = undefined;
  }

  /** event-log: handled and not saved yet, up to here. */
  get unsavedUpTo(): bigint | undefined {
    return this.unsaved;
  }

  /** event-log: everything up to `upTo` is handled; it is saved when due. */
  handledUpTo(upTo: bigint): void {
    this.unsaved = upTo;
  }

  /** event-log: ms until what was handled and not saved is due to be saved (`coalesceMs` after the last save); undefined: nothing to save. */
  dueIn(): number | undefined {
    if (this.unsaved === undefined) return undefined;
    return Math.max(0, this.savedAt + this.coalesceMs - Date.now());
  }

  /** Records `upTo` with the handler's writes and state; throws as the keeper does (CheckpointMovedError). */
  async save(upTo: bigint, writes: readonly Write[]): Promise<void> {
    await this.keeper.save(upTo, { writes, state: this.snapshot() });
    this.position = upTo;
    this.savedAt = Date.now();
    if (this.unsaved !== undefined && this.unsaved <= upTo) this.unsaved = undefined;
  }

  /** event-log: one last save of everything handled up to `upTo`, if it is past the stored one; throws as the keeper does. */
  async saveAtStop(upTo: bigint | undefined): Promise<void> {
    if (this.keeper.where !== "event-log" || upTo === undefined || (this.position !== undefined && upTo <= this.position)) return;
    await this.keeper.save(upTo, { writes: [], state: this.snapshot() });
    this.position = upTo;
    this.unsaved = undefined;
  }
}

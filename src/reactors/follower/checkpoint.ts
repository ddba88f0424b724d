/**
 * Where a log follower keeps its position (log-follower.ts): in the ReadStore, or in the event
 * log itself. Both record a position only if the stored one is still the one the follower last
 * loaded or saved, so two instances of a follower never both move it.
 */
import type { Write } from "../../infra/readstore/port.js";

export interface StoredCheckpoint {
  /** Everything up to here was handled (undefined: nothing yet). */
  position: bigint | undefined;
  /** The handler's state saved with it (event-log only; undefined otherwise). */
  state: unknown;
}

export interface FollowerCheckpoint {
  readonly where: "read-store" | "event-log";
  /** Reads the stored checkpoint; `save` expects it from now on. */
  load(): Promise<StoredCheckpoint>;
  /**
   * Records `upTo` with what the handler keeps: its writes (read-store, in the same atomic step) or
   * its state (event-log, in the same event). Throws CheckpointMovedError when the stored one is
   * no longer the one expected (another instance moved it, or it was lost with its store).
   */
  save(upTo: bigint, kept: { writes: readonly Write[]; state: unknown }): Promise<void>;
}

export class CheckpointMovedError extends Error {
  override name = "CheckpointMovedError";
  readonly code = "CHECKPOINT_MOVED";
}

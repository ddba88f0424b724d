/**
 * Long work on the main thread that reads synchronously (LMDB reads resolve without a turn of the
 * event loop) gives requests a turn every few milliseconds: a caller asks `pause()` between two
 * steps, and waits for the next turn once it has held the loop for `holdMs` since the last. A
 * `Pacing` (duty-cycle.ts) that leaves requests a turn rather than a share of the thread.
 */
import { setImmediate as turn } from "node:timers/promises";
import type { Pacing } from "./duty-cycle.js";

export class EventLoopTurns implements Pacing {
  private since = performance.now();

  constructor(private readonly holdMs = 4) {}

  /** Resolves at once while the loop was held less than `holdMs`, else at the next turn. */
  async pause(): Promise<void> {
    if (performance.now() - this.since < this.holdMs) return;
    await turn();
    this.since = performance.now();
  }
}

/** Rebuilds asked for while the projector runs (Projector.rebuild): the loop takes them one at a time, between batches. */
import type { RebuildProgress } from "./rebuild.js";
import type { Slot } from "./slots.js";

interface RebuildRequest {
  slots: Slot[];
  onProgress?: (p: RebuildProgress) => void;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class RebuildRequests {
  private readonly queue: RebuildRequest[] = [];

  get pending(): boolean {
    return this.queue.length > 0;
  }

  /** Queues a rebuild of `slots`; resolves once the loop ran it. */
  add(slots: Slot[], onProgress?: (p: RebuildProgress) => void): Promise<void> {
    return new Promise((resolve, reject) => this.queue.push({ slots, onProgress, resolve, reject }));
  }

  /** Runs the queued rebuilds in order, each settling its caller. */
  async runAll(rebuild: (slots: Slot[], onProgress?: (p: RebuildProgress) => void) => Promise<void>): Promise<void> {
    while (this.queue.length > 0) {
      const r = this.queue.shift()!;
      try {
        await rebuild(r.slots, r.onProgress);
        r.resolve();
      } catch (err) {
        r.reject(err);
      }
    }
  }

  rejectAll(err: Error): void {
    for (const r of this.queue.splice(0)) r.reject(err);
  }
}

/**
 * A log follower's worker: it takes batches from the queue (batch-queue.ts), hands them to the
 * handler, and records the checkpoint after each ("read-store"), or when a save is due
 * ("event-log"); it records the checkpoint past idle stretches of non-matching events too.
 */
import { AbortError } from "p-retry";
import type { Write } from "../../infra/readstore/port.js";
import type { BatchQueue } from "./batch-queue.js";
import { CheckpointMovedError } from "./checkpoint.js";
import type { CheckpointSaves } from "./checkpoint-saves.js";
import type { ResolvedFollowerOptions } from "./options.js";
import type { PositionWaiters } from "./position-waiters.js";
import type { Retries } from "./retries.js";

/** The checkpoint moved under the follower: its run ends, and it starts over from the stored one. */
export class Restart extends Error {}

export class BatchWorker {
  /** While the worker waits for events: ms until it saves then (undefined: not before an event matches); null while it works. */
  private waiting: number | undefined | null = null;
  private waitWatchers: Array<(dueInMs: number | undefined) => void> = [];

  constructor(
    private readonly opts: ResolvedFollowerOptions,
    private readonly queue: BatchQueue,
    private readonly saves: CheckpointSaves,
    private readonly progress: PositionWaiters,
    private readonly retries: Retries,
  ) {}

  /** Works until the run ends (`signal`); throws a Restart when the checkpoint moved. */
  async work(signal: AbortSignal): Promise<void> {
    const { queue, saves } = this;
    for (;;) {
      if (signal.aborted) return;
      if (queue.waiting === 0 && saves.where === "read-store") {
        // Record the checkpoint past an idle stretch of non-matching events.
        const idle = queue.seen !== undefined && (saves.position === undefined || queue.seen > saves.position);
        await this.wait(idle ? this.opts.idleCommitMs : undefined);
        if (signal.aborted) return;
        if (queue.waiting === 0 && idle) await this.commit([], queue.seen!, signal);
        continue;
      }
      if (queue.waiting === 0) {
        // event-log: what came while a batch was in flight matched nothing (its own saves, say): handled.
        if (queue.seen !== undefined) this.progress.handled(queue.seen);
        // Save what was handled once the last save is old enough (never for non-matching events alone).
        await this.wait(saves.dueIn());
        if (signal.aborted) return;
        if (queue.waiting === 0 && saves.dueIn() === 0) await this.commit([], saves.unsavedUpTo!, signal);
        continue;
      }
      if (this.opts.settle) {
        await new Promise((r) => setImmediate(r));
        if (signal.aborted) return;
      }
      const batch = queue.take(this.opts.maxBatch);
      // Everything delivered so far is covered when no matching event is left behind.
      const upTo = queue.waiting === 0 ? queue.seen! : batch[batch.length - 1]!.position;
      const writes = await this.retries.attempt(() => this.opts.handle(batch, signal), signal, { batch: batch.length, from: batch[0]!.position.toString() });
      if (saves.where === "read-store") await this.commit(writes ?? [], upTo, signal);
      else {
        if (writes?.length) throw new Error(`${this.opts.name}: a follower whose checkpoint is in the event log records no read-store writes (use snapshot)`);
        saves.handledUpTo(upTo);
        this.progress.handled(upTo);
        if (saves.dueIn() === 0) await this.commit([], upTo, signal);
      }
      queue.done();
    }
  }

  /** Resolves once the worker waits for events (at once if it waits now), with the ms until it saves then (undefined: not before an event matches). */
  nextWait(): Promise<number | undefined> {
    if (this.waiting !== null) return Promise.resolve(this.waiting);
    return new Promise((resolve) => this.waitWatchers.push(resolve));
  }

  private async wait(timeoutMs: number | undefined): Promise<void> {
    const woken = this.queue.nextWake(timeoutMs);
    this.waiting = timeoutMs;
    for (const watcher of this.waitWatchers.splice(0)) watcher(timeoutMs);
    await woken;
    this.waiting = null;
  }

  private async commit(writes: readonly Write[], upTo: bigint, signal: AbortSignal): Promise<void> {
    await this.retries.attempt(
      async () => {
        try {
          await this.saves.save(upTo, writes);
        } catch (err) {
          if (!(err instanceof CheckpointMovedError)) throw err;
          this.opts.log.warn({ follower: this.opts.name, err: err.message }, "the checkpoint moved under the follower: starting over from the stored one");
          throw new AbortError(new Restart(err.message));
        }
      },
      signal,
      { commit: upTo.toString() },
    );
    this.progress.handled(upTo);
  }
}

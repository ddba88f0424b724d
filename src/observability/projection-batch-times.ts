/**
 * A projector hook (with metrics on): how long each batch takes from reaching the projector until
 * every read model committed it (`cyborg_projection_batch_duration_seconds`); a write's answer
 * waits for its batch and the one in flight before it (read-your-writes). The batches of the
 * catch-up at start (the log up to its head then) are not counted: they are the start's, not a
 * write's.
 */
import type { RecordedEvent } from "../infra/eventstore/port.js";
import type { ProjectorHooks } from "../reactors/projector/projection.js";
import type { Metrics } from "./metrics.js";

export class ProjectionBatchTimes implements ProjectorHooks {
  private open: Array<{ upTo: bigint; t0: number }> = [];
  /** The log's head at start: batches up to it are the catch-up's. */
  private startHead: bigint | undefined;

  constructor(private readonly metrics: Pick<Metrics, "projectionBatch">) {}

  started(_checkpoints: ReadonlyMap<string, bigint | undefined>, head: bigint | undefined): void {
    this.startHead = head;
  }

  async beforeApply(batch: readonly RecordedEvent[]): Promise<void> {
    const upTo = batch.at(-1)!.position;
    if (this.startHead !== undefined && upTo <= this.startHead) return;
    this.open.push({ upTo, t0: performance.now() });
  }

  async afterCommit(position: bigint): Promise<void> {
    if (this.open.length === 0) return;
    const now = performance.now();
    this.open = this.open.filter((o) => {
      if (o.upTo > position) return true;
      this.metrics.projectionBatch((now - o.t0) / 1000);
      return false;
    });
  }

  replaying(): void {
    this.open = [];
  }
}

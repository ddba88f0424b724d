/**
 * A projector hook (with metrics on): how long each batch takes from reaching the projector until
 * every read model committed it (`cyborg_projection_batch_duration_seconds`); a write's answer
 * waits for its batch and the one in flight before it (read-your-writes).
 */
import type { RecordedEvent } from "../infra/eventstore/port.js";
import type { ProjectorHooks } from "../reactors/projector/projection.js";
import type { Metrics } from "./metrics.js";

export class ProjectionBatchTimes implements ProjectorHooks {
  private open: Array<{ upTo: bigint; t0: number }> = [];

  constructor(private readonly metrics: Pick<Metrics, "projectionBatch">) {}

  async beforeApply(batch: readonly RecordedEvent[]): Promise<void> {
    this.open.push({ upTo: batch.at(-1)!.position, t0: performance.now() });
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

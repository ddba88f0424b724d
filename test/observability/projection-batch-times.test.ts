/**
 * The projector hook behind cyborg_projection_batch_duration_seconds: one observation per batch,
 * from reaching the projector to every model's commit of it; the start's catch-up is left out.
 */
import { describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import { ProjectionBatchTimes } from "../../src/observability/projection-batch-times.js";

const batchTo = (...positions: number[]) => positions.map((p) => ({ position: BigInt(p) }) as RecordedEvent);

describe("ProjectionBatchTimes", () => {
  it("times each batch to the commit that covers it, not the batches of the catch-up at start", async () => {
    const seen: number[] = [];
    const hook = new ProjectionBatchTimes({ projectionBatch: (s) => void seen.push(s) });
    hook.started(new Map(), 10n);
    await hook.beforeApply(batchTo(1, 2, 10));
    await hook.afterCommit(10n);
    expect(seen).toHaveLength(0);
    await hook.beforeApply(batchTo(11, 12));
    await hook.beforeApply(batchTo(13));
    await hook.afterCommit(12n);
    expect(seen).toHaveLength(1);
    await hook.afterCommit(13n);
    expect(seen).toHaveLength(2);
    expect(seen.every((s) => s >= 0 && s < 1)).toBe(true);
  });

  it("a rebuild drops the batches in flight", async () => {
    const seen: number[] = [];
    const hook = new ProjectionBatchTimes({ projectionBatch: (s) => void seen.push(s) });
    hook.started(new Map(), undefined);
    await hook.beforeApply(batchTo(1));
    hook.replaying();
    await hook.afterCommit(1n);
    expect(seen).toHaveLength(0);
  });
});

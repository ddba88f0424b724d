/**
 * Between a log follower's two halves: the pump, which reads the subscription, and the worker,
 * which hands batches to the handler (batch-worker.ts). It holds the matching events read ahead
 * (reading pauses at `limit`), the batch in flight, and the newest position delivered.
 */
import type { RecordedEvent } from "../../infra/eventstore/port.js";

export class BatchQueue {
  /** Newest position the subscription delivered. */
  seen: bigint | undefined;
  private buffer: RecordedEvent[] = [];
  private inFlight: readonly RecordedEvent[] = [];
  private wakeWorker: (() => void) | undefined;
  private wakePump: (() => void) | undefined;

  constructor(private readonly limit: number) {}

  /** Matching events received and not handled yet (in flight or waiting). */
  get pending(): number {
    return this.inFlight.length + this.buffer.length;
  }

  /** The oldest event not handled yet. */
  get oldest(): RecordedEvent | undefined {
    return this.inFlight[0] ?? this.buffer[0];
  }

  /** Matching events waiting behind the batch in flight. */
  get waiting(): number {
    return this.buffer.length;
  }

  /** Nothing matching is waiting or in flight. */
  get idle(): boolean {
    return this.buffer.length === 0 && this.inFlight.length === 0;
  }

  /** A (re)start from `position`: nothing delivered after it. */
  restartAt(position: bigint | undefined): void {
    this.seen = position;
    this.buffer = [];
  }

  /** The pump: one more event delivered (kept if it matches), then waits while the queue is full. */
  async deliver(e: RecordedEvent, matches: boolean, signal: AbortSignal): Promise<void> {
    this.seen = e.position;
    if (matches) this.buffer.push(e);
    this.wakeWorker?.();
    while (!signal.aborted && this.buffer.length >= this.limit) await new Promise<void>((r) => (this.wakePump = r));
  }

  /** The worker: the next batch (oldest first), now in flight. */
  take(max: number): RecordedEvent[] {
    const batch = this.buffer.splice(0, max);
    this.wakePump?.();
    this.inFlight = batch;
    return batch;
  }

  /** The batch in flight is handled. */
  done(): void {
    this.inFlight = [];
  }

  /** The run ended: what was read ahead is read again by the next one. */
  clear(): void {
    this.inFlight = [];
    this.buffer = [];
  }

  /** Wakes both halves (the follower stops, or the run ends). */
  wake(): void {
    this.wakeWorker?.();
    this.wakePump?.();
  }

  /** The worker: waits for the next delivery (or `timeoutMs`, or a wake). */
  nextWake(timeoutMs?: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(resolve, timeoutMs);
      this.wakeWorker = () => {
        clearTimeout(timer);
        this.wakeWorker = undefined;
        resolve();
      };
    });
  }
}

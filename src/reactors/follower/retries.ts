/**
 * A log follower's retries: an attempt (a batch handed, a checkpoint saved) is made again after a
 * backoff (p-retry, exponential, forever) until it succeeds or the run ends; nothing is skipped.
 */
import pRetry from "p-retry";

export class Retries {
  /** Failed attempts at the current batch or commit. */
  count = 0;
  private readonly minMs: number;
  private readonly maxMs: number;

  constructor(
    backoff: { minMs?: number; maxMs?: number } | undefined,
    /** Told of each failed attempt (the run not ended), after it is counted. */
    private readonly onFailure: (err: Error, attempt: number, context: object) => void,
  ) {
    this.minMs = backoff?.minMs ?? 200;
    this.maxMs = Math.max(backoff?.maxMs ?? 30_000, this.minMs);
  }

  /** Runs `fn` until it succeeds, backing off between failures; rejects when the run ends (or with an AbortError's cause). */
  async attempt<T>(fn: () => Promise<T>, signal: AbortSignal, context: object): Promise<T> {
    const out = await pRetry(fn, {
      retries: Number.POSITIVE_INFINITY,
      factor: 2,
      minTimeout: this.minMs,
      maxTimeout: this.maxMs,
      randomize: true,
      signal,
      unref: true,
      onFailedAttempt: ({ error }) => {
        if (signal.aborted) return;
        this.count++;
        this.onFailure(error, this.count, context);
      },
    });
    this.count = 0;
    return out;
  }

  /** The backoff before the `attempt`th try again of what is not retried in place (exponential, without jitter). */
  delay(attempt: number): number {
    return backoffDelay(attempt, { minMs: this.minMs, maxMs: this.maxMs });
  }
}

/** The backoff before the `attempt`th try again (1-based): `minMs` doubled each time, at most `maxMs` (defaults 200 ms and 30 s). */
export function backoffDelay(attempt: number, backoff?: { minMs?: number; maxMs?: number }): number {
  const minMs = backoff?.minMs ?? 200;
  const maxMs = Math.max(backoff?.maxMs ?? 30_000, minMs);
  return Math.min(maxMs, minMs * 2 ** Math.max(0, attempt - 1));
}

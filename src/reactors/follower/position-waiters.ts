/** How far a log follower has handled the log, and the callers waiting for it to reach a position. */

interface Waiter {
  position: bigint;
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class PositionWaiters {
  /** Everything up to here is handled (recorded or not). */
  private handledUpTo: bigint | undefined;
  private waiters: Waiter[] = [];

  constructor(private readonly name: string) {}

  get upTo(): bigint | undefined {
    return this.handledUpTo;
  }

  /** A (re)start from a stored checkpoint: handled up to there, and no further (waiters keep waiting). */
  restartAt(position: bigint | undefined): void {
    this.handledUpTo = position;
  }

  reached(position: bigint): boolean {
    return this.handledUpTo !== undefined && this.handledUpTo >= position;
  }

  /** Resolves once `position` is handled; rejects after `timeoutMs`. */
  wait(position: bigint, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        position,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((x) => x !== w);
          reject(new Error(`${this.name} did not reach position ${position} within ${timeoutMs} ms (at ${this.handledUpTo ?? "none"})`));
        }, timeoutMs),
      };
      this.waiters.push(w);
    });
  }

  /** Everything up to `position` is handled: the waiters it reaches resolve. */
  handled(position: bigint): void {
    if (this.handledUpTo !== undefined && this.handledUpTo >= position) return;
    this.handledUpTo = position;
    if (this.waiters.length === 0) return;
    this.waiters = this.waiters.filter((w) => {
      if (w.position > position) return true;
      clearTimeout(w.timer);
      w.resolve();
      return false;
    });
  }

  rejectAll(err: Error): void {
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}

import { matchesFilter as matches, type EventFilter, type ReadAllOptions, type RecordedEvent, type Subscription } from "./port.js";

/**
 * A catch-up subscription for stores that can read the global log by position and signal appends.
 * It reads pages strictly after the last delivered position, so live appends that race with the
 * catch-up can be neither skipped nor delivered twice: the read position is the only cursor.
 */
export interface AppendSignal {
  /** Resolves at the next committed append (or when `close` is called). */
  next(): Promise<void>;
}

export function catchUpSubscription(
  readAll: (options: ReadAllOptions) => Promise<RecordedEvent[]>,
  signal: AppendSignal,
  options: { after?: bigint; filter?: EventFilter; pageSize?: number },
): Subscription {
  let closed = false;
  let wake: (() => void) | undefined;
  const pageSize = options.pageSize ?? 1000;

  async function* iterate(): AsyncGenerator<RecordedEvent> {
    let after = options.after;
    while (!closed) {
      // Arm the signal before reading, so an append that commits during the read wakes us.
      const appended = signal.next();
      const page = await readAll({ after, maxCount: pageSize });
      for (const e of page) {
        after = e.position;
        if (closed) return;
        if (matches(e, options.filter)) yield e;
      }
      if (page.length === pageSize) continue;
      await Promise.race([appended, new Promise<void>((r) => (wake = r))]);
    }
  }

  const it = iterate();
  return {
    [Symbol.asyncIterator]: () => it,
    async close() {
      closed = true;
      wake?.();
      await it.return(undefined);
    },
  };
}

/** A one-shot broadcast: every waiter is released by the next `fire`. */
export class AppendNotifier implements AppendSignal {
  private waiters: Array<() => void> = [];
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  fire(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
}

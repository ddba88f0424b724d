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
    // Armed before every read that could come back short, so an append that commits during the
    // read wakes us. It is re-armed only after it fired: arming once per page would leave one
    // waiter per page behind in the signal during a long catch-up.
    let appended = signal.next();
    while (!closed) {
      const page = await readAll({ after, maxCount: pageSize });
      for (const e of page) {
        after = e.position;
        if (closed) return;
        if (matches(e, options.filter)) yield e;
      }
      if (page.length === pageSize) continue;
      // close() may have run while readAll was pending; waiting now would hang until the next append.
      if (closed) return;
      // Not Promise.race with a long-lived "closing" promise: every race would leave a reaction on it.
      await new Promise<void>((resolve) => {
        wake = resolve;
        void appended.then(resolve);
      });
      wake = undefined;
      appended = signal.next();
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
    if (this.waiters.length === 0) return;
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
}

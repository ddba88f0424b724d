import { matchesFilter as matches, type EventFilter, type ReadAllOptions, type RecordedEvent, type Subscription } from "./port.js";

/**
 * A catch-up subscription for stores that can read the global log by position and signal appends.
 * It reads pages strictly after the last delivered position, so live appends that race with the
 * catch-up can be neither skipped nor delivered twice: the read position is the only cursor.
 *
 * Live feed: a store whose positions are consecutive integers (1, 2, 3, ...) may hand the events
 * of each commit to `fire`. A subscription that has caught up then takes them from there instead
 * of reading them back (lmdb: no B-tree read and no msgpack decode per event). It uses fed events
 * only when they continue exactly where it is; anything else (a gap, a feed dropped because the
 * consumer fell behind) falls back to reading the log.
 */
export interface AppendSignal {
  /** Resolves at the next committed append (or when `close` is called). */
  next(): Promise<void>;
  /** Calls `fn` with the events of every commit, in log order, until the returned function is called. */
  feed(fn: (events: readonly RecordedEvent[]) => void): () => void;
}

/** Fed events a subscription keeps before it gives up on the feed and reads the log instead. */
const MAX_FED = 10_000;

export function catchUpSubscription(
  readAll: (options: ReadAllOptions) => Promise<RecordedEvent[]>,
  signal: AppendSignal,
  options: { after?: bigint; filter?: EventFilter; pageSize?: number },
): Subscription {
  let closed = false;
  let wake: (() => void) | undefined;
  const pageSize = options.pageSize ?? 1000;
  let fed: RecordedEvent[] = [];
  const unfeed = signal.feed((events) => {
    if (fed.length + events.length > MAX_FED) fed = [];
    else for (const e of events) fed.push(e);
  });

  /** The fed events that continue exactly after `after`, or undefined when there are none. */
  function takeFed(after: bigint | undefined): RecordedEvent[] | undefined {
    const next = (after ?? 0n) + 1n;
    let skip = 0;
    while (skip < fed.length && fed[skip]!.position < next) skip++;
    if (skip === fed.length) {
      fed = [];
      return undefined;
    }
    if (fed[skip]!.position !== next) return undefined;
    const page = skip === 0 ? fed : fed.slice(skip);
    fed = [];
    return page;
  }

  async function* iterate(): AsyncGenerator<RecordedEvent> {
    let after = options.after;
    // Armed before every read that could come back short, so an append that commits during the
    // read wakes us. It is re-armed only after it fired: arming once per page would leave one
    // waiter per page behind in the signal during a long catch-up.
    let appended = signal.next();
    while (!closed) {
      const live = takeFed(after);
      const page = live ?? (await readAll({ after, maxCount: pageSize }));
      for (const e of page) {
        after = e.position;
        if (closed) return;
        if (matches(e, options.filter)) yield e;
      }
      if (live || page.length === pageSize) continue;
      // close() may have run while readAll was pending; waiting now would hang until the next append.
      if (closed) return;
      // Events fed while we read: take them now. (A read that found nothing new while the feed
      // has a gap cannot be helped by reading again: forget the feed and wait.)
      if (fed.length > 0 && page.length > 0) continue;
      fed = [];
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
      unfeed();
      fed = [];
      wake?.();
      await it.return(undefined);
    },
  };
}

/** A one-shot broadcast: every waiter is released by the next `fire`; feeds get every commit's events. */
export class AppendNotifier implements AppendSignal {
  private waiters: Array<() => void> = [];
  private readonly feeds = new Set<(events: readonly RecordedEvent[]) => void>();

  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  feed(fn: (events: readonly RecordedEvent[]) => void): () => void {
    this.feeds.add(fn);
    return () => this.feeds.delete(fn);
  }

  /** Whether anyone takes a commit's events (else the store need not collect them). */
  get feeding(): boolean {
    return this.feeds.size > 0;
  }

  /** `events`: what the commit appended, in log order, when the store can tell (feeds first, then waiters). */
  fire(events?: readonly RecordedEvent[]): void {
    if (events?.length) for (const fn of this.feeds) fn(events);
    if (this.waiters.length === 0) return;
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
}

/**
 * The catch-up of a follower that reads only some events (a filter) and keeps its position: the
 * matching events after `after` up to the head it finds, a page at a time, handed to `each`; then
 * the event at that head, which marks how far it has read whether or not anything matched. The
 * follower subscribes from `start` afterwards (the eviction follower, the cleaning watchdog).
 */
import type { EventFilter, EventStore, RecordedEvent } from "../../infra/eventstore/port.js";

export interface FilteredCatchUp {
  /** Where the follower's subscription starts: the head found, or `after` when that was already there. */
  start: bigint | undefined;
  /** The event at that head, when the catch-up read up to it. */
  atHead: RecordedEvent | undefined;
}

export async function catchUpFiltered(
  store: EventStore,
  o: { after: bigint | undefined; filter: EventFilter; page: number; stopped: () => boolean; each: (e: RecordedEvent) => Promise<void> | void },
): Promise<FilteredCatchUp> {
  const head = await store.headPosition();
  const behind = head !== undefined && (o.after === undefined || o.after < head);
  let from = o.after;
  while (behind && !o.stopped()) {
    const page = await store.readAll({ after: from, maxCount: o.page, filter: o.filter });
    const mine = page.filter((e) => e.position <= head);
    for (const e of mine) await o.each(e);
    if (mine.length < o.page) break;
    from = mine.at(-1)!.position;
  }
  if (!behind) return { start: o.after, atHead: undefined };
  const [atHead] = await store.readAll({ after: head - 1n, maxCount: 1 });
  return { start: head, atHead: atHead?.position === head ? atHead : undefined };
}

/**
 * What a replay may leave out: for each model that declares how its streams end
 * (Projection.ends), the streams that ended at or before the replay's point. Their events would
 * write keys that their last event deletes again, so the model comes out the same without them.
 *
 * Bounded: at most MAX_ENDED stream names a prefix (about 100 MB); beyond that the rest of the
 * streams are replayed as usual. A store that cannot list its streams (readStreamEnds answers
 * undefined) leaves nothing out.
 */
import type { EventStore } from "../../infra/eventstore/port.js";
import type { Slot } from "./slots.js";

const MAX_ENDED = 1_000_000;
const PAGE = 10_000;

export async function endedStreams(
  events: Pick<EventStore, "readStreamEnds">,
  slots: readonly Slot[],
  upTo: bigint,
  max = MAX_ENDED,
): Promise<Map<Slot, ReadonlySet<string>>> {
  const out = new Map<Slot, ReadonlySet<string>>();
  const byClaim = new Map<string, ReadonlySet<string>>();
  for (const s of slots) {
    const ends = s.projection.ends;
    if (!ends) continue;
    const claim = JSON.stringify([ends.prefix, [...ends.types].sort()]);
    let ended = byClaim.get(claim);
    if (!ended) byClaim.set(claim, (ended = await collect(events, ends.prefix, new Set(ends.types), upTo, max)));
    if (ended.size > 0) out.set(s, ended);
  }
  return out;
}

async function collect(events: Pick<EventStore, "readStreamEnds">, prefix: string, types: ReadonlySet<string>, upTo: bigint, max: number): Promise<Set<string>> {
  const ended = new Set<string>();
  for (let after: string | undefined; ended.size < max; ) {
    const page = await events.readStreamEnds({ prefix, after, maxCount: PAGE });
    if (!page || page.length === 0) break;
    for (const end of page) {
      if (end.position <= upTo && types.has(end.type) && ended.size < max) ended.add(end.stream);
    }
    after = page.at(-1)!.stream;
  }
  return ended;
}

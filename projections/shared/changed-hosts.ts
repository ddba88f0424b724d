/**
 * Which hosts an inventory model changed, and when: every event on a host's stream marks the host
 * with the event's position (`:changed-hosts`, member the hostname, score the position of the
 * last event that changed it). The placement engine's candidates, kept across decisions, re-read
 * only the hosts marked after what they last read (src/api/kept-candidates.ts).
 */
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import { encodeCursor } from "../../src/infra/readstore/keys-and-cursors.js";
import type { ReadStore, Write } from "../../src/infra/readstore/port.js";
import { score } from "./keys.js";

const HOST_STREAM = "host-";
const PAGE = 1000;

/** The event's writes, with the mark of the host whose stream it is on. */
export function markingHost(k: (part: string) => string, event: RecordedEvent, writes: Write[]): Write[] {
  if (!event.stream.startsWith(HOST_STREAM)) return writes;
  return [...writes, { op: "zadd", key: k("changed-hosts"), member: event.stream.slice(HOST_STREAM.length), score: score(event.position) }];
}

/** The hosts marked at or after `position` (every host when undefined). */
export async function hostsChangedSince(store: ReadStore, k: (part: string) => string, position: bigint | undefined): Promise<string[]> {
  const out: string[] = [];
  let after = position === undefined ? undefined : encodeCursor(score(position), "");
  for (;;) {
    const page = await store.range([k("changed-hosts")], { after, limit: PAGE });
    for (const item of page.items) out.push(item.member);
    if (!page.hasMore || page.items.length === 0) return out;
    after = page.items[page.items.length - 1]!.cursor;
  }
}

import type { ReadStreamOptions, RecordedEvent } from "./port.js";

/** Apply direction, fromRevision (inclusive) and maxCount to a stream held as an array. */
export function sliceStream(events: readonly RecordedEvent[], options: ReadStreamOptions): RecordedEvent[] {
  const max = options.maxCount ?? Number.POSITIVE_INFINITY;
  if (options.direction === "backwards") {
    const from = Math.min(options.fromRevision ?? events.length - 1, events.length - 1);
    const out: RecordedEvent[] = [];
    for (let r = from; r >= 0 && out.length < max; r--) out.push(events[r]!);
    return out;
  }
  const from = Math.max(options.fromRevision ?? 0, 0);
  return events.slice(from, Number.isFinite(max) ? from + max : undefined);
}

/**
 * Index of the last of `n` entries whose time is at or before `t` (binary search; times are the
 * store's clock, in commit order), or -1 when the first is already later.
 */
export function lastAtOrBefore(n: number, timeOf: (i: number) => number, t: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (timeOf(mid) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

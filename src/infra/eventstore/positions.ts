/** The index of the first item after `position` in a list ordered by log position (the list's length when none is). */
export function firstAfter(list: ReadonlyArray<{ position: bigint }>, position: bigint): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.position <= position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

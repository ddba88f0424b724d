/**
 * Event ids: uuid v7, time-ordered, so the event store's id index grows at its end instead of
 * touching a random page per event (about 2x the appends/s of random ids with 100 writers,
 * bench/RESULTS.md).
 *
 * The random part comes from a pooled buffer: uuid's own source asks the OS for 16 bytes per id,
 * which cost ~2.5% of the server's CPU under a bind storm. Ids made in the same millisecond keep
 * the millisecond prefix; their order within it is random, which the index does not mind.
 */
import { randomFillSync } from "node:crypto";
import { v7 } from "uuid";

const POOL_BYTES = 16 * 512;
let pool = new Uint8Array(0);
let offset = POOL_BYTES;

export function newEventId(): string {
  if (offset + 16 > pool.length) {
    pool = randomFillSync(new Uint8Array(POOL_BYTES));
    offset = 0;
  }
  const random = pool.subarray(offset, offset + 16);
  offset += 16;
  return v7({ random });
}

/** Key layout helpers every read model uses: its keys, its index families, and log positions as scores. */
import type { Write } from "../../src/infra/readstore/port.js";
import { keyPrefix } from "../../src/infra/readstore/keys-and-cursors.js";

/** Builds the keys of one projection. */
export function keys(projection: string): (part: string, id?: string) => string {
  const prefix = keyPrefix(projection);
  // Called for every write of every event: no rest array, no join.
  return (part, id) => (id === undefined ? prefix + part : `${prefix}${part}:${id}`);
}

/**
 * Writers for a projection's index families (see the `index` write): `file(member, field, value)`
 * files a member under the family of `field`, ordered by the index `order`. Key strings are built
 * once, so every write carries the same string objects (the adapters hash them in Maps).
 */
export function indexFamilies<F extends string>(key: (part: string) => string, families: Readonly<Record<F, string>>, order: string) {
  const familyKeys = Object.fromEntries(Object.entries<string>(families).map(([f, n]) => [f, key(n)])) as Record<F, string>;
  const orderKey = key(order);
  const file = (member: string, field: F, value: string | null): Write => ({ op: "index", index: familyKeys[field], member, value, order: orderKey });
  return { orderKey, file };
}

/**
 * A log position as a sorted-set score. Scores are doubles: exact up to 2^53, which is 9 PB of
 * EventStoreDB log or 9e15 events; beyond that the projection refuses rather than misorder.
 */
export function score(position: bigint): number {
  if (position > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`position ${position} is beyond 2^53: cannot be a score`);
  return Number(position);
}

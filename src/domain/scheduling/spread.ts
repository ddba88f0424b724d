/**
 * Spreading equal requests: among hosts the weigher ranks equal (and providers equal on a host),
 * the order is a stable hash of the request's key with the host's name (or the provider's uuid),
 * so concurrent requests for the same thing start on different devices instead of all racing for
 * the first one. Deterministic given the key; without a key, names decide as before.
 */

/** FNV-1a (32 bits) of the key and the name, then mixed (murmur3's finalizer) so names that differ only at the end still land far apart. */
export function spreadHash(key: string, name: string): number {
  let h = 0x811c9dc5;
  const s = `${key}\u0000${name}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Orders two names ranked equal: by the key's hash when there is a key, then by the names. */
export function tieBreak(key: string | null | undefined, a: string, b: string): number {
  if (key) {
    const d = spreadHash(key, a) - spreadHash(key, b);
    if (d !== 0) return d;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A Map that drops its least recently used entries beyond `max`; `get` counts as use.
 *
 * Approximate, to keep `get` cheap: an entry is moved to the young end only when more than max/4
 * entries were placed after it. So an entry used more often than once every 3/4 max placements is
 * never dropped, and a hot entry costs one lookup per get instead of a delete and a re-insert.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, { value: V; placed: number }>();
  private placements = 0;

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    if (this.placements - hit.placed > this.max >> 2) {
      this.entries.delete(key);
      hit.placed = ++this.placements;
      this.entries.set(key, hit);
    }
    return hit.value;
  }

  /** Without counting as use. */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: K, value: V): void {
    const old = this.entries.get(key);
    if (old !== undefined && this.placements - old.placed <= this.max >> 2) {
      old.value = value;
      return;
    }
    this.entries.delete(key);
    this.entries.set(key, { value, placed: ++this.placements });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * A bounded memory of recent keys for audit verify's walk, cheaper per access than an LRU list:
 * two generations of Maps; a set goes to the young one, and when it is full the old generation is
 * dropped whole and the young one becomes old (no per-entry delete, which leaves holes in a V8
 * Map). A key read from the old generation moves to the young one. It keeps at least the last
 * max / 2 keys set or read, and never more than `max`.
 */
export class Recent<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly half: number;

  constructor(max: number) {
    this.half = Math.max(1, Math.floor(max / 2));
  }

  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined || this.old.size === 0) return v;
    const aged = this.old.get(key);
    if (aged !== undefined) this.set(key, aged);
    return aged;
  }

  set(key: K, value: V): void {
    if (this.young.size >= this.half && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }
}

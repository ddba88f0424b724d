/**
 * A read store that keeps some projections in other stores: the embedded mode keeps the audit
 * index on disk (LmdbReadStore, it grows with the log), the models READ_MODELS_ON_DISK names in
 * another LmdbReadStore, and every other model in memory. Each call
 * goes to the store of its projection; a read naming keys of both is split, and its answers come
 * back in the order of its keys. A range intersects indexes of one store only (of one projection,
 * in practice): keys of both are refused.
 */
import { keyPrefix } from "./keys-and-cursors.js";
import type { Doc, Origin, RangeOptions, RangePage, ReadStore, Stamp, StoreDump, Write } from "./port.js";

export class SplitReadStore implements ReadStore {
  readonly kind = "split" as const;
  /** `{name}:` of each projection kept apart, with its store. */
  private readonly prefixes: Array<[string, ReadStore]>;

  constructor(
    private readonly main: ReadStore,
    private readonly apart: ReadonlyMap<string, ReadStore>,
  ) {
    this.prefixes = [...apart].map(([name, store]) => [keyPrefix(name), store]);
  }

  /** Where each projection lives, for logs and /readyz. */
  describe(): Record<string, string> {
    return Object.fromEntries([["*", this.main.kind], ...[...this.apart].map(([name, s]) => [name, s.kind])]);
  }

  applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<void> {
    return this.of(projection).applyBatch(projection, writes, checkpoint, expected, origin);
  }

  async getCheckpoint(projection: string): Promise<bigint | undefined> {
    return this.of(projection).getCheckpoint(projection);
  }

  getCheckpoints(projections: readonly string[]): Promise<Array<bigint | undefined>> {
    return this.spread(projections, (p) => this.of(p), (s, ps) => s.getCheckpoints(ps));
  }

  getStamps(projections: readonly string[]): Promise<Array<Stamp | undefined>> {
    return this.spread(projections, (p) => this.of(p), (s, ps) => s.getStamps(ps));
  }

  watchReconnects(listener: () => void): () => void {
    const stops = this.stores().map((s) => s.watchReconnects(listener));
    return () => stops.forEach((stop) => stop());
  }

  drop(projection: string): Promise<void> {
    return this.of(projection).drop(projection);
  }

  markServing(projection: string, checkpoint: bigint | null): Promise<boolean> {
    return this.of(projection).markServing(projection, checkpoint);
  }

  unmarkServing(projection: string): Promise<void> {
    return this.of(projection).unmarkServing(projection);
  }

  serving(projections: readonly string[]): Promise<boolean[]> {
    return this.spread(projections, (p) => this.of(p), (s, ps) => s.serving(ps));
  }

  guarded(): ReadStore {
    const views = new Map(this.stores().map((s) => [s, s.guarded()]));
    return new SplitReadStore(views.get(this.main)!, new Map([...this.apart].map(([name, s]) => [name, views.get(s)!])));
  }

  getDocs(keys: readonly string[]): Promise<Array<Doc | null>> {
    return this.spread(keys, (k) => this.ofKey(k), (s, ks) => s.getDocs(ks));
  }

  getMembers(keys: readonly string[]): Promise<string[][]> {
    return this.spread(keys, (k) => this.ofKey(k), (s, ks) => s.getMembers(ks));
  }

  count(keys: readonly string[]): Promise<number[]> {
    return this.spread(keys, (k) => this.ofKey(k), (s, ks) => s.count(ks));
  }

  async range(keys: readonly string[], options: RangeOptions): Promise<RangePage> {
    const store = keys.length > 0 ? this.ofKey(keys[0]!) : this.main;
    if (keys.some((k) => this.ofKey(k) !== store)) throw new RangeError(`range over keys kept in different stores: ${keys.join(", ")}`);
    return store.range(keys, options);
  }

  dump(projection: string): Promise<StoreDump> {
    return this.of(projection).dump(projection);
  }

  /** Forgets everything in each store that can (memory, lmdb), as a Redis FLUSHALL would (tests of the projector's self-healing). */
  async flushAll(): Promise<void> {
    for (const s of this.stores()) await (s as Partial<{ flushAll(): unknown }>).flushAll?.();
  }

  async close(): Promise<void> {
    await Promise.all(this.stores().map((s) => s.close()));
  }

  /** Each store once (one store may keep several projections apart). */
  private stores(): ReadStore[] {
    return [...new Set([this.main, ...this.apart.values()])];
  }

  private of(projection: string): ReadStore {
    return this.apart.get(projection) ?? this.main;
  }

  private ofKey(key: string): ReadStore {
    for (const [prefix, store] of this.prefixes) if (key.startsWith(prefix)) return store;
    return this.main;
  }

  /**
   * One call per store for the items it holds (one call in all when they are in one store, the
   * usual case), the answers put back in the items' order.
   */
  private async spread<I, O>(items: readonly I[], storeOf: (item: I) => ReadStore, read: (store: ReadStore, items: I[]) => Promise<O[]>): Promise<O[]> {
    const stores = items.map(storeOf);
    const first = stores[0];
    if (first === undefined || stores.every((s) => s === first)) return read(first ?? this.main, [...items]);
    const out = new Array<O>(items.length);
    await Promise.all(
      [...new Set(stores)].map(async (store) => {
        const at = stores.flatMap((s, i) => (s === store ? [i] : []));
        const answers = await read(store, at.map((i) => items[i]!));
        at.forEach((i, j) => (out[i] = answers[j]!));
      }),
    );
    return out;
  }
}

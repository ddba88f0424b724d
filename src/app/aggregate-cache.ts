import { LRUCache } from "lru-cache";

/**
 * In-process cache of folded aggregates: stream -> {state, revision, position}. A handler starts from the
 * cached state and reads only the events after the cached revision, so long streams (a profile's,
 * a host's) are not refolded on every command. Only states that match the store are cached (folded
 * from read events, or the result of an append that passed its expected-revision check), and an
 * entry never goes back to an older revision, so concurrent handlers and conflicts keep it correct.
 * States are immutable and may be shared. Least recently used entries are dropped beyond `max`.
 */
export interface CachedAggregate {
  state: unknown;
  revision: number;
  position: bigint | null;
}

export class AggregateCache {
  private readonly entries: LRUCache<string, CachedAggregate>;

  constructor(max = 10_000) {
    this.entries = new LRUCache({ max });
  }

  get(stream: string): CachedAggregate | undefined {
    return this.entries.get(stream);
  }

  set(stream: string, entry: CachedAggregate): void {
    const current = this.entries.peek(stream);
    if (current && current.revision >= entry.revision) return;
    this.entries.set(stream, entry);
  }

  delete(stream: string): void {
    this.entries.delete(stream);
  }

  get size(): number {
    return this.entries.size;
  }
}

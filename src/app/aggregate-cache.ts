import { LRUCache } from "lru-cache";
import { streamPrefix } from "../domain/shared/types.js";

/**
 * In-process cache of folded aggregates: stream -> {state, revision, position}. A handler starts from the
 * cached state and reads only the events after the cached revision, so long streams (a profile's,
 * a host's) are not refolded on every command. Only states that match the store are cached (folded
 * from read events, or the result of an append that passed its expected-revision check), and an
 * entry never goes back to an older revision, so concurrent handlers and conflicts keep it correct.
 * States are immutable and may be shared. Least recently used entries are dropped beyond the limit.
 *
 * Host streams have their own limit, apart from the ARQ, instance and key streams a boot storm
 * makes and drops. A host's folded state is large (a tree of 8 devices with their deployables,
 * handles and attributes: about 83 KB of heap), and a fleet's agents report in turn, so a limit
 * that held every host would grow the heap by the fleet's size (0.8 GB at 10,000 hosts) and the
 * garbage collector's work with it. A host out of the cache costs little: its agent's
 * confirmation reads the stream's last events (app/inventory.ts), and a bind or a whole report
 * folds the host's latest period (about 1 ms for a registered host of 8 devices and 102 events).
 */
export interface CachedAggregate {
  state: unknown;
  revision: number;
  position: bigint | null;
}

/** Host streams cached by default: the busiest hosts of a fleet, about 85 MB of heap at 8 devices a host. */
export const MAX_HOSTS = 1024;

export class AggregateCache {
  private readonly entries: LRUCache<string, CachedAggregate>;
  private readonly hosts: LRUCache<string, CachedAggregate>;

  /** `max` entries of every other stream, and `maxHosts` host streams (those binds and reports touched last). */
  constructor(max = 10_000, maxHosts = MAX_HOSTS) {
    this.entries = new LRUCache({ max });
    this.hosts = new LRUCache({ max: maxHosts });
  }

  get(stream: string): CachedAggregate | undefined {
    return this.of(stream).get(stream);
  }

  set(stream: string, entry: CachedAggregate): void {
    const entries = this.of(stream);
    const current = entries.peek(stream);
    if (current && current.revision >= entry.revision) return;
    entries.set(stream, entry);
  }

  delete(stream: string): void {
    this.of(stream).delete(stream);
  }

  get size(): number {
    return this.entries.size + this.hosts.size;
  }

  private of(stream: string): LRUCache<string, CachedAggregate> {
    return stream.startsWith(streamPrefix.host) ? this.hosts : this.entries;
  }
}

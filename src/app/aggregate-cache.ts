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
 * Host streams have their own limit. Every agent reports once an interval, so a fleet reads its
 * hosts in a cycle; in one least-recently-used cache shared with the ARQ, instance and key streams
 * a boot storm makes, a fleet of about as many hosts as entries would find none of them cached
 * (each host's entry is the oldest by its next report), and every report would fold its host's
 * stream from the log again.
 */
export interface CachedAggregate {
  state: unknown;
  revision: number;
  position: bigint | null;
}

export class AggregateCache {
  private readonly entries: LRUCache<string, CachedAggregate>;
  private readonly hosts: LRUCache<string, CachedAggregate>;
  /** The load of each stream under way, and the one its waiters share. */
  private readonly loading = new Map<string, { current: Promise<unknown>; next?: Promise<unknown> }>();

  /** `max` entries of every other stream, and `maxHosts` host streams (a fleet's hosts, with room to spare). */
  constructor(max = 10_000, maxHosts = 100_000) {
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

  /**
   * Loads `stream` with `load`, but not beside another load of it: loads of one stream that run
   * together would each read and fold the same events appended since the cached revision (a
   * popular profile's stream, which every creation of ARQs from it writes to, cost a fold of every
   * creation that committed with it, for every one of them). While a load runs, the loads asked
   * for share one more, started once it is done, from the state it cached: it reads what was
   * appended before any of them was asked for. At most two reads of a stream are in flight.
   */
  inTurn<T>(stream: string, load: () => Promise<T>): Promise<T> {
    const running = this.loading.get(stream);
    if (!running) return this.startLoad(stream, load);
    const next = () => this.startLoad(stream, load);
    return (running.next ??= running.current.then(next, next)) as Promise<T>;
  }

  private startLoad<T>(stream: string, load: () => Promise<T>): Promise<T> {
    const current = load();
    const entry: { current: Promise<unknown>; next?: Promise<unknown> } = { current };
    this.loading.set(stream, entry);
    const done = () => {
      if (this.loading.get(stream) === entry && entry.next === undefined) this.loading.delete(stream);
    };
    current.then(done, done);
    return current;
  }

  get size(): number {
    return this.entries.size + this.hosts.size;
  }

  private of(stream: string): LRUCache<string, CachedAggregate> {
    return stream.startsWith(streamPrefix.host) ? this.hosts : this.entries;
  }
}

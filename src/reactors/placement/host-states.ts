/**
 * A host's inventory as the domain folds it from stream `host-<hostname>` (hostDecider.evolve).
 * Folded states are kept with their revision, so the next load reads only the newer events.
 */
import { LRUCache } from "lru-cache";
import { readLatestPeriod } from "../../app/handle.js";
import { hostDecider, type HostState } from "../../domain/inventory/decider.js";
import type { InventoryEvent } from "../../domain/inventory/events.js";
import { stream, streamPrefix } from "../../domain/shared/types.js";
import type { EventStore } from "../../infra/eventstore/port.js";

export interface LoadedHost {
  state: HostState;
  /** Revision of the last event folded; -1 for a stream that does not exist. */
  revision: number;
}

export const HOST_STREAM_PREFIX = streamPrefix.host;

export const hostOfStream = (name: string): string | null => (name.startsWith(HOST_STREAM_PREFIX) ? name.slice(HOST_STREAM_PREFIX.length) : null);

export class HostStates {
  private readonly cache: LRUCache<string, LoadedHost>;

  constructor(
    private readonly store: EventStore,
    maxHosts = 20_000,
  ) {
    this.cache = new LRUCache({ max: maxHosts });
  }

  async load(hostname: string): Promise<LoadedHost> {
    const cached = this.cache.get(hostname);
    // Cold: from the host's latest summary (closing the books), not from its first event.
    const name = stream.host(hostname);
    const events = cached ? await this.store.readStream(name, { fromRevision: cached.revision + 1 }) : await readLatestPeriod(this.store, name, "HostBooksClosed");
    if (cached && events.length === 0) return cached;
    let state = cached?.state ?? hostDecider.initialState();
    for (const e of events) state = hostDecider.evolve(state, { type: e.type, data: e.data } as InventoryEvent);
    const loaded = { state, revision: events.at(-1)?.revision ?? cached?.revision ?? -1 };
    this.cache.set(hostname, loaded);
    return loaded;
  }
}

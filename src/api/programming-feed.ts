/**
 * Programming requests for the agents' subscriptions (programmingRequests): one follower of the
 * event log per API process, from the head at its start, routing RegionProgrammingRequested to the
 * subscriptions of that host. It needs neither a projector nor pub/sub, so every API replica
 * serves its agents alone; requests made before a subscription are read from the host's stream.
 */
import type { EventStore, Subscription } from "../infra/eventstore/port.js";
import { KeyedFanout } from "./keyed-fanout.js";

export class ProgrammingFeed {
  private started?: Promise<void>;
  private sub?: Subscription;
  private loop?: Promise<void>;
  /** Request ids, by host. */
  private readonly byHost = new KeyedFanout<string>();

  constructor(private readonly store: EventStore) {}

  /** Request ids made on this host from now on; `ready` resolves once none can be missed. */
  listen(hostname: string): { ready: Promise<void>; events: AsyncIterable<string>; close(): void } {
    const ready = this.start();
    return { ready, ...this.byHost.listen([hostname], ready) };
  }

  get listening(): number {
    return this.byHost.listening;
  }

  async close(): Promise<void> {
    await this.sub?.close();
    await this.loop;
  }

  private start(): Promise<void> {
    this.started ??= this.follow().catch((err) => {
      // The next listener tries again (the subscriptions waiting on this one fail with the error).
      this.started = undefined;
      throw err;
    });
    return this.started;
  }

  private async follow(): Promise<void> {
    const after = await this.store.headPosition();
    const sub = (this.sub = this.store.subscribeToAll({ after, filter: { eventTypes: ["RegionProgrammingRequested"], streamPrefixes: ["host-"] } }));
    this.loop = (async () => {
      for await (const e of sub) {
        const { hostname, requestId } = e.data as { hostname: string; requestId: string };
        this.byHost.dispatch(requestId, hostname);
      }
    })();
  }
}

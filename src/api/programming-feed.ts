/**
 * Programming requests for the agents' subscriptions (programmingRequests): one follower of the
 * event log per API process, from the head at its start, routing RegionProgrammingRequested to the
 * subscriptions of that host. It needs neither a projector nor pub/sub, so every API replica
 * serves its agents alone; requests made before a subscription are read from the host's stream.
 */
import type { EventStore, Subscription } from "../infra/eventstore/port.js";
import { SubscriptionQueue } from "../infra/pubsub/subscription-queue.js";

type Queue = SubscriptionQueue<string>;

export class ProgrammingFeed {
  private started?: Promise<void>;
  private sub?: Subscription;
  private loop?: Promise<void>;
  private readonly byHost = new Map<string, Set<Queue>>();

  constructor(private readonly store: EventStore) {}

  /** Request ids made on this host from now on; `ready` resolves once none can be missed. */
  listen(hostname: string): { ready: Promise<void>; events: AsyncIterable<string>; close(): void } {
    const ready = this.start();
    const queue: Queue = new SubscriptionQueue(ready, async () => {
      const set = this.byHost.get(hostname);
      set?.delete(queue);
      if (set?.size === 0) this.byHost.delete(hostname);
    });
    let set = this.byHost.get(hostname);
    if (!set) this.byHost.set(hostname, (set = new Set()));
    set.add(queue);
    return { ready, events: queue, close: () => void queue.close() };
  }

  get listening(): number {
    let n = 0;
    for (const set of this.byHost.values()) n += set.size;
    return n;
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
        for (const q of this.byHost.get(hostname) ?? []) q.push(requestId);
      }
    })();
  }
}

import { ARQ_BOUND_TOPIC, type ArqBindNotification, type PubSub, type PubSubSubscription } from "../pubsub/port.js";
import { SubscriptionQueue } from "../pubsub/subscription-queue.js";
import type { BindNotification, NotificationFeed, NotificationFilter } from "./graphql/context.js";

/**
 * One pub/sub subscription per process for accelerator-request-bound, routed to the GraphQL
 * subscriptions that wait for that ARQ or instance. Each notification wakes only its listeners,
 * not every open subscription (a boot storm has thousands open at once).
 */
export class BindNotificationRouter implements NotificationFeed {
  private sub?: PubSubSubscription<ArqBindNotification>;
  private pump?: Promise<void>;
  private readonly byArq = new Map<string, Set<SubscriptionQueue<BindNotification>>>();
  private readonly byInstance = new Map<string, Set<SubscriptionQueue<BindNotification>>>();
  private readonly everything = new Set<SubscriptionQueue<BindNotification>>();

  constructor(private readonly pubsub: PubSub) {}

  listen(filter: NotificationFilter = {}) {
    const sub = this.start();
    const keys: Array<[Map<string, Set<SubscriptionQueue<BindNotification>>>, string]> = [];
    if (filter.arqUuids?.length) for (const a of filter.arqUuids) keys.push([this.byArq, a]);
    else if (filter.instanceUuid) keys.push([this.byInstance, filter.instanceUuid]);
    const queue: SubscriptionQueue<BindNotification> = new SubscriptionQueue(sub.ready, async () => {
      if (keys.length === 0) this.everything.delete(queue);
      for (const [index, key] of keys) {
        const set = index.get(key);
        set?.delete(queue);
        if (set?.size === 0) index.delete(key);
      }
    });
    if (keys.length === 0) this.everything.add(queue);
    for (const [index, key] of keys) {
      let set = index.get(key);
      if (!set) index.set(key, (set = new Set()));
      set.add(queue);
    }
    return { ready: sub.ready, events: queue, close: () => void queue.close() };
  }

  /** Open listeners (GraphQL subscriptions to accelerator-request-bound in this process). */
  get listening(): number {
    const n = this.everything.size;
    const seen = new Set<SubscriptionQueue<BindNotification>>();
    for (const index of [this.byArq, this.byInstance]) for (const set of index.values()) for (const q of set) seen.add(q);
    return n + seen.size;
  }

  async close(): Promise<void> {
    await this.sub?.close();
    await this.pump;
  }

  private start(): PubSubSubscription<ArqBindNotification> {
    if (this.sub) return this.sub;
    const sub = (this.sub = this.pubsub.subscribe<ArqBindNotification>(ARQ_BOUND_TOPIC));
    this.pump = (async () => {
      for await (const n of sub) this.dispatch(n);
    })();
    return sub;
  }

  private dispatch(n: ArqBindNotification) {
    const targets = new Set(this.everything);
    for (const q of this.byArq.get(n.arqUuid) ?? []) targets.add(q);
    for (const q of this.byInstance.get(n.instanceUuid) ?? []) targets.add(q);
    const note: BindNotification = { arqUuid: n.arqUuid, instanceUuid: n.instanceUuid, status: n.status, reason: n.reason, position: n.position };
    for (const q of targets) q.push(note);
  }
}

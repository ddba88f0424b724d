import type { PubSub, PubSubSubscription } from "./port.js";
import { SubscriptionQueue } from "./subscription-queue.js";

/** Pub/sub inside one process (embedded mode, tests). Delivery is synchronous with publish. */
export class InProcessPubSub implements PubSub {
  readonly kind = "in-process" as const;
  private readonly topics = new Map<string, Set<SubscriptionQueue<unknown>>>();

  async publish(topic: string, payload: unknown): Promise<void> {
    const subs = this.topics.get(topic);
    if (!subs || subs.size === 0) return;
    // One JSON round trip, so subscribers get what they would get from Redis (and cannot share it).
    const json = JSON.stringify(payload);
    for (const s of subs) s.push(JSON.parse(json));
  }

  subscribe<T = unknown>(topic: string): PubSubSubscription<T> {
    let subs = this.topics.get(topic);
    if (!subs) this.topics.set(topic, (subs = new Set()));
    const queue: SubscriptionQueue<unknown> = new SubscriptionQueue(Promise.resolve(), async () => {
      subs!.delete(queue);
      if (subs!.size === 0 && this.topics.get(topic) === subs) this.topics.delete(topic);
    });
    subs.add(queue);
    return queue as SubscriptionQueue<T>;
  }

  async close(): Promise<void> {
    for (const subs of [...this.topics.values()]) for (const s of [...subs]) await s.close();
  }
}

import { SubscriptionQueue } from "../infra/pubsub/subscription-queue.js";

interface Listener<E> {
  readonly queue: SubscriptionQueue<E>;
  /** The last dispatch that reached it: one event, one copy, however many of its keys it names. */
  round: number;
}

/**
 * Events delivered to the listeners registered under their keys. A dispatch wakes the listeners of
 * the event's keys, not every open one (a boot storm has thousands open at once). A listener
 * registered under no key gets every event; one registered under several keys gets an event once.
 */
export class KeyedFanout<E> {
  private readonly byKey = new Map<string, Set<Listener<E>>>();
  private readonly everything = new Set<Listener<E>>();
  private open = 0;
  private rounds = 0;

  /** A listener for the events of these keys (of every event when there are none), until closed. */
  listen(keys: readonly string[], ready: Promise<void>): { events: SubscriptionQueue<E>; close(): void } {
    const queue: SubscriptionQueue<E> = new SubscriptionQueue(ready, async () => {
      this.open--;
      if (keys.length === 0) this.everything.delete(listener);
      for (const key of keys) {
        const set = this.byKey.get(key);
        set?.delete(listener);
        if (set?.size === 0) this.byKey.delete(key);
      }
    });
    const listener: Listener<E> = { queue, round: 0 };
    this.open++;
    if (keys.length === 0) this.everything.add(listener);
    for (const key of keys) {
      let set = this.byKey.get(key);
      if (!set) this.byKey.set(key, (set = new Set()));
      set.add(listener);
    }
    return { events: queue, close: () => void queue.close() };
  }

  /** Delivers the event to the listeners of its keys and to those of every event; returns how many. */
  dispatch(event: E, keys: string | readonly string[]): number {
    const round = ++this.rounds;
    let delivered = this.deliver(event, this.everything, round);
    if (typeof keys === "string") return delivered + this.deliver(event, this.byKey.get(keys), round);
    for (const key of keys) delivered += this.deliver(event, this.byKey.get(key), round);
    return delivered;
  }

  /** Open listeners, each counted once. */
  get listening(): number {
    return this.open;
  }

  private deliver(event: E, listeners: Set<Listener<E>> | undefined, round: number): number {
    if (!listeners) return 0;
    let delivered = 0;
    for (const l of listeners) {
      if (l.round === round) continue;
      l.round = round;
      l.queue.push(event);
      delivered++;
    }
    return delivered;
  }
}

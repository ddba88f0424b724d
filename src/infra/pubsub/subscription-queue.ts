import type { PubSubSubscription } from "./port.js";

/**
 * The consumer side of one subscription: a bounded queue and an async iterator over it. When the
 * consumer falls `limit` messages behind, the oldest are dropped (at most once, never unbounded).
 */
export class SubscriptionQueue<T> implements PubSubSubscription<T> {
  private readonly items: T[] = [];
  private waiter?: (r: IteratorResult<T>) => void;
  private closed = false;
  dropped = 0;

  constructor(
    readonly ready: Promise<void>,
    private readonly onClose: () => Promise<void>,
    private readonly limit = 10_000,
  ) {}

  push(item: T): void {
    if (this.closed) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (this.items.length > this.limit) {
      this.items.shift();
      this.dropped++;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.items.length = 0;
    this.waiter?.({ value: undefined, done: true });
    this.waiter = undefined;
    await this.onClose();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiter = resolve));
      },
      return: async () => {
        await this.close();
        return { value: undefined, done: true };
      },
    };
  }
}

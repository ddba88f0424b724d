/** A subscription of the port on one of EventStoreDB's: one gRPC call, which ends with the server's error when the connection drops. */
import type { AllStreamResolvedEvent, AllStreamSubscription } from "@eventstore/db-client";
import type { RecordedEvent, Subscription } from "./port.js";

export interface SubscriptionParts {
  /** Checks what must be checked, then opens the server's subscription. */
  open(): Promise<AllStreamSubscription>;
  /** The port's event for one the server sent, or undefined when it is not the caller's. */
  pick(resolved: AllStreamResolvedEvent): RecordedEvent | undefined;
  onClose(subscription: Subscription): void;
}

export function esdbSubscription(parts: SubscriptionParts): Subscription {
  let closed = false;
  let sub: AllStreamSubscription | undefined;
  let wake: (() => void) | undefined;
  async function* iterate(): AsyncGenerator<RecordedEvent> {
    const opened = await parts.open();
    if (closed) return void (await opened.unsubscribe(), opened.destroy());
    sub = opened;
    const source = opened[Symbol.asyncIterator]();
    while (!closed) {
      // close() wakes a pending wait itself instead of trusting the cancelled gRPC stream to end.
      const next = await new Promise<IteratorResult<AllStreamResolvedEvent>>((resolve, reject) => {
        wake = () => resolve({ done: true, value: undefined });
        source.next().then(resolve, reject);
      });
      wake = undefined;
      if (next.done || closed) break;
      const e = parts.pick(next.value);
      if (e) yield e;
    }
  }
  const it = iterate();
  const subscription: Subscription = {
    [Symbol.asyncIterator]: () => it,
    close: async () => {
      if (closed) return;
      closed = true;
      parts.onClose(subscription);
      wake?.();
      await sub?.unsubscribe();
      await it.return(undefined);
      sub?.destroy();
    },
  };
  return subscription;
}

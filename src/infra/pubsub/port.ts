/**
 * The PubSub port: notifications to subscribers, across API replicas (Redis) or inside one
 * process. At most once: a subscriber that was not listening misses a message, so listeners
 * that must not miss a state (accelerator-request-bound) also look at the read models after
 * `ready`.
 *
 * Structurally a type-graphql `PubSub` (publish(routingKey, payload) / subscribe(routingKey)).
 */
export interface PubSubSubscription<T> extends AsyncIterable<T> {
  /** Resolves once the subscription is active: everything published after that is delivered. */
  readonly ready: Promise<void>;
  /** Stops the subscription; a pending iteration ends. */
  close(): Promise<void>;
}

export interface PubSub {
  readonly kind: "in-process" | "redis";
  /** Payloads travel as JSON (bigint must be turned into strings first). */
  publish(topic: string, payload: unknown): Promise<void>;
  subscribe<T = unknown>(topic: string): PubSubSubscription<T>;
  close(): Promise<void>;
}

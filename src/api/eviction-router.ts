import { ARQ_EVICTED_TOPIC, type ArqEvictedEvent } from "../../projections/arqs/eviction-notifier.js";
import type { PubSub, PubSubSubscription } from "../infra/pubsub/port.js";
import { KeyedFanout } from "./keyed-fanout.js";

/** What an eviction listener waits for: this ARQ's notices, this instance's, or (neither) every one. */
export interface EvictionFilter {
  arqUuid?: string | null;
  instanceUuid?: string | null;
}

export interface EvictionFeed {
  /** Starts listening at once; `ready` resolves when no notice published later can be missed. */
  listen(filter: EvictionFilter): { ready: Promise<void>; events: AsyncIterable<ArqEvictedEvent>; close(): void };
}

/**
 * One pub/sub subscription per process for accelerator-request-evicted, routed to the GraphQL
 * subscriptions that wait for that ARQ or instance (each notice wakes only its keys' listeners).
 */
export class EvictionNotificationRouter implements EvictionFeed {
  private sub?: PubSubSubscription<ArqEvictedEvent>;
  private pump?: Promise<void>;
  private readonly fanout = new KeyedFanout<ArqEvictedEvent>();

  constructor(private readonly pubsub: PubSub) {}

  listen(filter: EvictionFilter) {
    const sub = this.start();
    const keys = [...(filter.arqUuid ? [`arq:${filter.arqUuid}`] : []), ...(filter.instanceUuid ? [`instance:${filter.instanceUuid}`] : [])];
    const { events, close } = this.fanout.listen(keys, sub.ready);
    return { ready: sub.ready, events, close };
  }

  get listening(): number {
    return this.fanout.listening;
  }

  async close(): Promise<void> {
    await this.sub?.close();
    await this.pump;
  }

  private start(): PubSubSubscription<ArqEvictedEvent> {
    if (this.sub) return this.sub;
    const sub = (this.sub = this.pubsub.subscribe<ArqEvictedEvent>(ARQ_EVICTED_TOPIC));
    this.pump = (async () => {
      for await (const e of sub) this.fanout.dispatch(e, [`arq:${e.arqUuid}`, ...(e.instanceUuid ? [`instance:${e.instanceUuid}`] : [])]);
    })();
    return sub;
  }
}

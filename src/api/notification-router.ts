import { ARQ_BOUND_TOPIC, type ArqBoundEvent } from "../../projections/arqs/bound-notifier.js";
import { CORRELATION_ATTRIBUTE, type Tracing } from "../observability/tracing.js";
import type { PubSub, PubSubSubscription } from "../infra/pubsub/port.js";
import { SubscriptionQueue } from "../infra/pubsub/subscription-queue.js";
import type { NotificationFeed, NotificationFilter } from "./services.js";

type Queue = SubscriptionQueue<ArqBoundEvent>;

/**
 * One pub/sub subscription per process for accelerator-request-bound, routed to the GraphQL
 * subscriptions that wait for that ARQ or instance. Each event wakes only its listeners, not
 * every open subscription (a boot storm has thousands open at once).
 */
export class BindNotificationRouter implements NotificationFeed {
  private sub?: PubSubSubscription<ArqBoundEvent>;
  private pump?: Promise<void>;
  private readonly byArq = new Map<string, Set<Queue>>();
  private readonly byInstance = new Map<string, Set<Queue>>();
  private readonly everything = new Set<Queue>();

  constructor(
    private readonly pubsub: PubSub,
    private readonly tracing?: Tracing,
  ) {}

  listen(filter: NotificationFilter = {}) {
    const sub = this.start();
    const keys: Array<[Map<string, Set<Queue>>, string]> = [];
    if (filter.arqUuids?.length) for (const a of new Set(filter.arqUuids)) keys.push([this.byArq, a]);
    else if (filter.instanceUuid) keys.push([this.byInstance, filter.instanceUuid]);
    const queue: Queue = new SubscriptionQueue(sub.ready, async () => {
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
    const seen = new Set<Queue>();
    for (const index of [this.byArq, this.byInstance]) for (const set of index.values()) for (const q of set) seen.add(q);
    return this.everything.size + seen.size;
  }

  async close(): Promise<void> {
    await this.sub?.close();
    await this.pump;
  }

  private start(): PubSubSubscription<ArqBoundEvent> {
    if (this.sub) return this.sub;
    const sub = (this.sub = this.pubsub.subscribe<ArqBoundEvent>(ARQ_BOUND_TOPIC));
    this.pump = (async () => {
      for await (const e of sub) this.dispatch(e);
    })();
    return sub;
  }

  private dispatch(e: ArqBoundEvent) {
    const targets = new Set(this.everything);
    for (const q of this.byArq.get(e.tag) ?? []) targets.add(q);
    for (const q of this.byInstance.get(e.serverUuid) ?? []) targets.add(q);
    for (const q of targets) q.push(e);
    if (this.tracing && e.trace) this.traceDispatch(e, targets.size);
  }

  /** A span in the bind's trace: the notification reached this process's subscriptions. */
  private traceDispatch(e: ArqBoundEvent, listeners: number) {
    const attributes = { "cyborg.arq": e.tag, "cyborg.status": e.status, "cyborg.listeners": listeners, [CORRELATION_ATTRIBUTE]: e.trace!.correlationId };
    this.tracing!.tracer.startSpan("notify accelerator-request-bound", { attributes }, this.tracing!.contextOf(e.trace!.traceparent)).end();
  }
}

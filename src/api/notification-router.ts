import { ARQ_BOUND_TOPIC, type ArqBoundEvent } from "../../projections/arqs/bound-notifier.js";
import { CORRELATION_ATTRIBUTE, type Tracing } from "../observability/tracing.js";
import type { PubSub, PubSubSubscription } from "../infra/pubsub/port.js";
import { KeyedFanout } from "./keyed-fanout.js";
import type { NotificationFeed, NotificationFilter } from "./services.js";

/**
 * One pub/sub subscription per process for accelerator-request-bound, routed to the GraphQL
 * subscriptions that wait for that ARQ or instance. Each event wakes only its listeners, not
 * every open subscription (a boot storm has thousands open at once).
 */
export class BindNotificationRouter implements NotificationFeed {
  private sub?: PubSubSubscription<ArqBoundEvent>;
  private pump?: Promise<void>;
  /** Listeners by ARQ, and those of every event (no filter). */
  private readonly byArq = new KeyedFanout<ArqBoundEvent>();
  /** Listeners by instance: a key of their own, since an instance's uuid is not an ARQ's. */
  private readonly byInstance = new KeyedFanout<ArqBoundEvent>();

  constructor(
    private readonly pubsub: PubSub,
    private readonly tracing?: Tracing,
  ) {}

  listen(filter: NotificationFilter = {}) {
    const sub = this.start();
    const { events, close } =
      filter.instanceUuid && !filter.arqUuids?.length
        ? this.byInstance.listen([filter.instanceUuid], sub.ready)
        : this.byArq.listen(filter.arqUuids ?? [], sub.ready);
    return { ready: sub.ready, events, close };
  }

  /** Open listeners (GraphQL subscriptions to accelerator-request-bound in this process). */
  get listening(): number {
    return this.byArq.listening + this.byInstance.listening;
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
    const listeners = this.byArq.dispatch(e, e.tag) + this.byInstance.dispatch(e, e.serverUuid);
    if (this.tracing && e.trace) this.traceDispatch(e, listeners);
  }

  /** A span in the bind's trace: the notification reached this process's subscriptions. */
  private traceDispatch(e: ArqBoundEvent, listeners: number) {
    const attributes = { "cyborg.arq": e.tag, "cyborg.status": e.status, "cyborg.listeners": listeners, [CORRELATION_ATTRIBUTE]: e.trace!.correlationId };
    this.tracing!.tracer.startSpan("notify accelerator-request-bound", { attributes }, this.tracing!.contextOf(e.trace!.traceparent)).end();
  }
}

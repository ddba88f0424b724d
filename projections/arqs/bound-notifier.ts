/**
 * accelerator-request-bound: the arqs read model's notifier, a hook of the projector. It publishes
 * one event per ARQ per bind, after every read model shows it.
 *
 * Which events resolve a bind is the domain's rule (src/domain/arqs/bind-resolutions.ts, shared
 * with the Nova notifier); this notifier feeds it the ARQ events, and asks the arqs read model
 * (before the batch is applied) about ARQs whose bind started before it began.
 *
 * Which events notify on restart, and publishing once every projection committed them, are
 * committed-notifier.ts's.
 */
import { BindResolutions } from "../../src/domain/arqs/bind-resolutions.js";
import { ARQ_BOUND_EVENT, boundNotification, type BoundNotification } from "../../src/domain/arqs/bound-notification.js";
import type { ArqEvent } from "../../src/domain/events.js";
import type { RecordedEvent, Recorded } from "../../src/infra/eventstore/port.js";
import type { PubSub } from "../../src/infra/pubsub/port.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { CommittedNotifier, type NotifierLogger } from "./committed-notifier.js";
import { getArqs } from "./queries.js";

/** The pub/sub topic the notifications travel on. */
export const ARQ_BOUND_TOPIC = ARQ_BOUND_EVENT;

/** A resolved bind's notification, with the resolving event's trace when tracing is on (the notification joins that trace). */
export type ArqBoundEvent = BoundNotification & { trace?: { traceparent: string; correlationId: string } };

export class BoundNotifier extends CommittedNotifier<ArqBoundEvent> {
  /** Which ARQs are in BIND_STARTED, and which events resolve their binds. */
  private readonly resolutions = new BindResolutions();

  constructor(
    pubsub: PubSub,
    private readonly store: ReadStore,
    log: NotifierLogger,
  ) {
    super(pubsub, log, ARQ_BOUND_TOPIC);
  }

  /** Records the bind completions the batch holds. */
  async beforeApply(batch: readonly RecordedEvent[]): Promise<void> {
    const fresh = batch.filter((e) => e.position > this.preparedUpTo && e.stream.startsWith("arq-")) as Array<Recorded<ArqEvent>>;
    if (batch.length) this.preparedUpTo = maxOf(this.preparedUpTo, batch.at(-1)!.position);
    if (fresh.length === 0) return;
    await this.learnStarted(fresh);
    for (const e of fresh) {
      const r = this.resolutions.next(e);
      if (!r || e.position <= this.floor) continue;
      if (r.instanceUuid) this.hold(e, r.arqUuid, r.status, r.reason, r.instanceUuid);
      else this.log.warn({ arqUuid: r.arqUuid }, "bind failed without an instance: no notification");
    }
  }

  protected arqOf(event: ArqBoundEvent): string {
    return event.tag;
  }

  /** Asks the read model (not yet showing the batch) about ARQs whose failure the batch holds but whose start this notifier has not seen. */
  private async learnStarted(fresh: ReadonlyArray<Recorded<ArqEvent>>): Promise<void> {
    const unknown = this.resolutions.mustLearn(fresh, (e) => e.position > this.floor).map((e) => e.data.arqUuid);
    if (unknown.length === 0) return;
    for (const arq of await getArqs(this.store, unknown)) if (arq?.state === "BIND_STARTED") this.resolutions.learnBinding(arq.uuid, arq.instanceUuid);
  }

  private hold(e: RecordedEvent, arqUuid: string, status: ArqBoundEvent["status"], reason: string | null, instanceUuid: string): void {
    const event: ArqBoundEvent = boundNotification({ arqUuid, status, reason }, instanceUuid, e.position);
    if (typeof e.metadata.traceparent === "string") event.trace = { traceparent: e.metadata.traceparent, correlationId: e.metadata.correlationId };
    this.pending.push(event);
  }
}

const maxOf = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * accelerator-request-bound: the arqs read model's notifier, a hook of the projector. It publishes
 * one event per ARQ per bind, after every read model shows it.
 *
 * Which events resolve a bind is the domain's rule (src/domain/arqs/bind-resolutions.ts, shared
 * with the Nova notifier); this notifier feeds it the ARQ events, and asks the arqs read model
 * (before the batch is applied) about ARQs whose bind started before it began.
 *
 * Which events notify (the rule on restart): only those after `floor`. At start the floor is the
 * arqs checkpoint (events after it were never applied, so never notified: a restart notifies each
 * of them once), or the head of the log when the arqs model has none (a new or lost store: the
 * whole log is history); before a rebuild or a heal it is raised to the furthest position already
 * applied, so a replay never notifies again. A notification waits in `pending` until every
 * projection committed its event (so a subscriber that queries on receipt sees the new state
 * everywhere), and is sent once (`sentUpTo`).
 */
import { BindResolutions } from "../../src/domain/arqs/bind-resolutions.js";
import { ARQ_BOUND_EVENT, boundNotification, type BoundNotification } from "../../src/domain/arqs/bound-notification.js";
import type { ArqEvent } from "../../src/domain/events.js";
import type { RecordedEvent, Recorded } from "../../src/infra/eventstore/port.js";
import type { ProjectorHooks } from "../../src/reactors/projector/projection.js";
import type { PubSub } from "../../src/infra/pubsub/port.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { name } from "./projection.js";
import { getArqs } from "./queries.js";

/** The pub/sub topic the notifications travel on. */
export const ARQ_BOUND_TOPIC = ARQ_BOUND_EVENT;

/** A resolved bind's notification, with the resolving event's trace when tracing is on (the notification joins that trace). */
export type ArqBoundEvent = BoundNotification & { trace?: { traceparent: string; correlationId: string } };

export interface NotifierLogger {
  warn(obj: object, msg: string): void;
}

export class BoundNotifier implements ProjectorHooks {
  /** Which ARQs are in BIND_STARTED, and which events resolve their binds. */
  private readonly resolutions = new BindResolutions();
  private readonly pending: ArqBoundEvent[] = [];
  private preparedUpTo = -1n;
  private sentUpTo = -1n;
  private floor = -1n;
  /** Events published since start (tests, metrics). */
  published = 0;

  constructor(
    private readonly pubsub: PubSub,
    private readonly store: ReadStore,
    private readonly log: NotifierLogger,
  ) {}

  started(checkpoints: ReadonlyMap<string, bigint | undefined>, head: bigint | undefined): void {
    this.raiseFloor(checkpoints.get(name) ?? head);
  }

  replaying(appliedUpTo: bigint | undefined): void {
    this.raiseFloor(appliedUpTo);
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

  /** Publishes what every projection has committed, in log order. */
  async afterCommit(committedUpTo: bigint): Promise<void> {
    let n = 0;
    while (n < this.pending.length && BigInt(this.pending[n]!.position) <= committedUpTo) n++;
    for (const event of this.pending.splice(0, n)) {
      const p = BigInt(event.position);
      if (p <= this.sentUpTo) continue;
      this.sentUpTo = p;
      try {
        await this.pubsub.publish(ARQ_BOUND_TOPIC, event);
        this.published++;
      } catch (err) {
        // At most once: listeners re-read the read model when they (re)subscribe.
        this.log.warn({ err, arqUuid: event.tag }, "could not publish accelerator-request-bound");
      }
    }
  }

  /** Asks the read model (not yet showing the batch) about ARQs whose failure the batch holds but whose start this notifier has not seen. */
  private async learnStarted(fresh: ReadonlyArray<Recorded<ArqEvent>>): Promise<void> {
    const unknown = this.resolutions.mustLearn(fresh, (e) => e.position > this.floor).map((e) => e.data.arqUuid);
    if (unknown.length === 0) return;
    for (const arq of await getArqs(this.store, unknown)) if (arq?.state === "BIND_STARTED") this.resolutions.learnBinding(arq.uuid, arq.instanceUuid);
  }

  private raiseFloor(position: bigint | undefined): void {
    if (position !== undefined && position > this.floor) this.floor = position;
  }

  private hold(e: RecordedEvent, arqUuid: string, status: ArqBoundEvent["status"], reason: string | null, instanceUuid: string): void {
    const event: ArqBoundEvent = boundNotification({ arqUuid, status, reason }, instanceUuid, e.position);
    if (typeof e.metadata.traceparent === "string") event.trace = { traceparent: e.metadata.traceparent, correlationId: e.metadata.correlationId };
    this.pending.push(event);
  }
}

const maxOf = (a: bigint, b: bigint) => (a > b ? a : b);

import type { ArqEvent } from "../domain/events.js";
import type { RecordedEvent } from "../eventstore/port.js";
import { ARQ_BOUND_TOPIC, type ArqBindNotification, type PubSub } from "../pubsub/port.js";
import type { Recorded } from "./projection.js";

/** What the arqs read model says about ARQs the runner has not seen start binding. */
export type ArqStateLookup = (arqUuids: readonly string[]) => Promise<Map<string, { state: string; instanceUuid: string | null }>>;

export interface NotifierLogger {
  warn(obj: object, msg: string): void;
}

/**
 * accelerator-request-bound, once per ARQ per bind, after the read models show it.
 *
 * A bind completes when an ARQ in BIND_STARTED becomes BOUND (COMPLETED) or BIND_FAILED (FAILED);
 * BOUND -> BIND_FAILED (its device was lost) is not a bind completion. ArqBound can only follow
 * BIND_STARTED; for ArqBindFailed the notifier follows which ARQs are in BIND_STARTED, and asks the
 * arqs read model (before the batch is applied) about those whose bind started before it began.
 *
 * Which events notify (the rule on restart): only those after `floor`. The runner sets the floor
 * to the arqs checkpoint it loads at start (events after it were never applied, so never notified:
 * a restart notifies each of them once); to the head of the log when the arqs model has no
 * checkpoint (new or lost store: the whole log is history); and before a rebuild or a heal, it
 * raises the floor to the furthest position already applied, so a replay never notifies again.
 * A notification waits in `pending` until every projection committed its event (so a subscriber
 * that queries on receipt sees the new state everywhere), and is sent once (`sentUpTo`).
 */
export class BindNotifier {
  /** ARQs in BIND_STARTED, as seen by this runner: uuid -> instance. */
  private readonly started = new Map<string, string | null>();
  private readonly pending: ArqBindNotification[] = [];
  private preparedUpTo = -1n;
  private sentUpTo = -1n;
  floor = -1n;
  published = 0;

  constructor(
    private readonly pubsub: PubSub,
    private readonly lookup: ArqStateLookup,
    private readonly log: NotifierLogger,
  ) {}

  /** Raises the floor (never lowers it). */
  raiseFloor(position: bigint | undefined): void {
    if (position !== undefined && position > this.floor) this.floor = position;
  }

  /** Runs before the batch is applied: records the bind completions it holds. */
  async prepare(batch: readonly RecordedEvent[]): Promise<void> {
    const fresh = batch.filter((e) => e.position > this.preparedUpTo && e.stream.startsWith("arq-")) as Array<Recorded<ArqEvent>>;
    if (batch.length) this.preparedUpTo = maxOf(this.preparedUpTo, batch.at(-1)!.position);
    if (fresh.length === 0) return;
    const seen = new Set<string>();
    const unknown: string[] = [];
    for (const e of fresh) {
      const u = e.data.arqUuid;
      if (seen.has(u)) continue;
      seen.add(u);
      if (e.type === "ArqBindFailed" && e.position > this.floor && !this.started.has(u)) unknown.push(u);
    }
    if (unknown.length) {
      for (const [u, s] of await this.lookup(unknown)) if (s.state === "BIND_STARTED") this.started.set(u, s.instanceUuid);
    }
    for (const e of fresh) {
      const u = e.data.arqUuid;
      switch (e.type) {
        case "ArqBindStarted":
          this.started.set(u, e.data.instanceUuid);
          break;
        case "ArqBound":
          this.started.delete(u);
          if (e.position > this.floor) this.hold(e, "COMPLETED", null, e.data.instanceUuid);
          break;
        case "ArqBindFailed": {
          const wasStarted = this.started.has(u);
          const instance = e.data.instanceUuid ?? this.started.get(u) ?? null;
          this.started.delete(u);
          if (wasStarted && e.position > this.floor) {
            if (instance) this.hold(e, "FAILED", e.data.reason, instance);
            else this.log.warn({ arqUuid: u }, "bind failed without an instance: no notification");
          }
          break;
        }
        default:
          this.started.delete(u);
      }
    }
  }

  /** Publishes what every projection has committed (position <= committedUpTo), in log order. */
  async flush(committedUpTo: bigint | undefined): Promise<void> {
    if (committedUpTo === undefined) return;
    let n = 0;
    while (n < this.pending.length && BigInt(this.pending[n]!.position) <= committedUpTo) n++;
    if (n === 0) return;
    const ready = this.pending.splice(0, n);
    for (const msg of ready) {
      const p = BigInt(msg.position);
      if (p <= this.sentUpTo) continue;
      this.sentUpTo = p;
      try {
        await this.pubsub.publish(ARQ_BOUND_TOPIC, msg);
        this.published++;
      } catch (err) {
        // At most once: listeners re-read the read model when they (re)subscribe.
        this.log.warn({ err, arqUuid: msg.arqUuid }, "could not publish accelerator-request-bound");
      }
    }
  }

  private hold(e: RecordedEvent, status: "COMPLETED" | "FAILED", reason: string | null, instanceUuid: string): void {
    const arqUuid = (e.data as { arqUuid: string }).arqUuid;
    this.pending.push({
      name: "accelerator-request-bound",
      serverUuid: instanceUuid,
      tag: arqUuid,
      status,
      reason,
      arqUuid,
      instanceUuid,
      position: e.position.toString(),
    });
  }
}

const maxOf = (a: bigint, b: bigint) => (a > b ? a : b);

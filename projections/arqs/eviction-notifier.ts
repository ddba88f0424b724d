/**
 * accelerator-request-evicted: a projector hook that publishes each eviction notice
 * (`ArqEvictionRequested`) once every read model shows it, so a holder that reads its ARQ on
 * receipt sees the notice. The same rule on restart as the bound notifier's: only events after
 * `floor` notify (the arqs checkpoint at start, or the head of the log for a new or lost store;
 * raised before a rebuild), so a replay never notifies again. At most once, like every pub/sub
 * message: a subscriber that was not listening reads the notices still outstanding from the read
 * model when it subscribes.
 */
import type { ArqEvictionRequested } from "../../src/domain/arqs/events.js";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import type { PubSub } from "../../src/infra/pubsub/port.js";
import type { ProjectorHooks } from "../../src/reactors/projector/projection.js";
import type { NotifierLogger } from "./bound-notifier.js";
import { name } from "./projection.js";

export const ARQ_EVICTED_TOPIC = "accelerator-request-evicted";

/** One notice as it travels: the event's data and its log position (decimal string). */
export type ArqEvictedEvent = ArqEvictionRequested["data"] & { position: string };

export class EvictionNotifier implements ProjectorHooks {
  private readonly pending: ArqEvictedEvent[] = [];
  private preparedUpTo = -1n;
  private floor = -1n;
  /** Notices published since start (tests). */
  published = 0;

  constructor(
    private readonly pubsub: PubSub,
    private readonly log: NotifierLogger,
  ) {}

  started(checkpoints: ReadonlyMap<string, bigint | undefined>, head: bigint | undefined): void {
    this.raiseFloor(checkpoints.get(name) ?? head);
  }

  replaying(appliedUpTo: bigint | undefined): void {
    this.raiseFloor(appliedUpTo);
  }

  async beforeApply(batch: readonly RecordedEvent[]): Promise<void> {
    for (const e of batch) {
      if (e.position <= this.preparedUpTo || e.position <= this.floor || e.type !== "ArqEvictionRequested") continue;
      this.pending.push({ ...(e.data as ArqEvictionRequested["data"]), position: e.position.toString() });
    }
    if (batch.length && batch.at(-1)!.position > this.preparedUpTo) this.preparedUpTo = batch.at(-1)!.position;
  }

  async afterCommit(committedUpTo: bigint): Promise<void> {
    let n = 0;
    while (n < this.pending.length && BigInt(this.pending[n]!.position) <= committedUpTo) n++;
    for (const notice of this.pending.splice(0, n)) {
      try {
        await this.pubsub.publish(ARQ_EVICTED_TOPIC, notice);
        this.published++;
      } catch (err) {
        this.log.warn({ err, arqUuid: notice.arqUuid }, "could not publish accelerator-request-evicted");
      }
    }
  }

  private raiseFloor(position: bigint | undefined): void {
    if (position !== undefined && position > this.floor) this.floor = position;
  }
}

/**
 * accelerator-request-evicted: a projector hook that publishes each eviction notice
 * (`ArqEvictionRequested`) once every read model shows it, so a holder that reads its ARQ on
 * receipt sees the notice; the rule on restart and the publishing are committed-notifier.ts's. A
 * subscriber that was not listening reads the notices still outstanding from the read model when
 * it subscribes.
 */
import type { ArqEvictionRequested } from "../../src/domain/arqs/events.js";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import type { PubSub } from "../../src/infra/pubsub/port.js";
import { CommittedNotifier, type NotifierLogger } from "./committed-notifier.js";

export const ARQ_EVICTED_TOPIC = "accelerator-request-evicted";

/** One notice as it travels: the event's data and its log position (decimal string). */
export type ArqEvictedEvent = ArqEvictionRequested["data"] & { position: string };

export class EvictionNotifier extends CommittedNotifier<ArqEvictedEvent> {
  constructor(pubsub: PubSub, log: NotifierLogger) {
    super(pubsub, log, ARQ_EVICTED_TOPIC);
  }

  async beforeApply(batch: readonly RecordedEvent[]): Promise<void> {
    for (const e of batch) {
      if (e.position <= this.preparedUpTo || e.position <= this.floor || e.type !== "ArqEvictionRequested") continue;
      this.pending.push({ ...(e.data as ArqEvictionRequested["data"]), position: e.position.toString() });
    }
    if (batch.length && batch.at(-1)!.position > this.preparedUpTo) this.preparedUpTo = batch.at(-1)!.position;
  }

  protected arqOf(notice: ArqEvictedEvent): string {
    return notice.arqUuid;
  }
}

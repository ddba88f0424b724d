/**
 * What the arqs model's notifiers (bound-notifier.ts, eviction-notifier.ts) share, as projector
 * hooks: which events may notify, and publishing once every read model shows them.
 *
 * Which events notify (the rule on restart): only those after `floor`. At start the floor is the
 * arqs checkpoint (events after it were never applied, so never notified: a restart notifies each
 * of them once), or the head of the log when the arqs model has none (a new or lost store: the
 * whole log is history); before a rebuild or a heal it is raised to the furthest position already
 * applied, so a replay never notifies again. A notification waits in `pending` until every
 * projection committed its event (so a subscriber that queries on receipt sees the new state
 * everywhere), and is sent once. At most once, like every pub/sub message: listeners re-read the
 * read model when they (re)subscribe.
 */
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import type { PubSub } from "../../src/infra/pubsub/port.js";
import type { ProjectorHooks } from "../../src/reactors/projector/projection.js";
import { name } from "./projection.js";

export interface NotifierLogger {
  warn(obj: object, msg: string): void;
}

export abstract class CommittedNotifier<T extends { position: string }> implements ProjectorHooks {
  protected readonly pending: T[] = [];
  /** The last event of the batches seen (a batch read again after a failed apply adds nothing twice). */
  protected preparedUpTo = -1n;
  protected floor = -1n;
  private sentUpTo = -1n;
  /** Notifications published since start (tests, metrics). */
  published = 0;

  constructor(
    private readonly pubsub: PubSub,
    protected readonly log: NotifierLogger,
    private readonly topic: string,
  ) {}

  started(checkpoints: ReadonlyMap<string, bigint | undefined>, head: bigint | undefined): void {
    this.raiseFloor(checkpoints.get(name) ?? head);
  }

  replaying(appliedUpTo: bigint | undefined): void {
    this.raiseFloor(appliedUpTo);
  }

  /** Holds the notifications the batch gives (in `pending`, in log order). */
  abstract beforeApply(batch: readonly RecordedEvent[]): Promise<void>;

  /** The ARQ a notification is about, for the log line of a failed publish. */
  protected abstract arqOf(notification: T): string;

  /** Publishes what every projection has committed, in log order. */
  async afterCommit(committedUpTo: bigint): Promise<void> {
    let n = 0;
    while (n < this.pending.length && BigInt(this.pending[n]!.position) <= committedUpTo) n++;
    for (const notification of this.pending.splice(0, n)) {
      const p = BigInt(notification.position);
      if (p <= this.sentUpTo) continue;
      this.sentUpTo = p;
      try {
        await this.pubsub.publish(this.topic, notification);
        this.published++;
      } catch (err) {
        this.log.warn({ err, arqUuid: this.arqOf(notification) }, `could not publish ${this.topic}`);
      }
    }
  }

  private raiseFloor(position: bigint | undefined): void {
    if (position !== undefined && position > this.floor) this.floor = position;
  }
}

/**
 * The projector's log reader: one subscription from a position into a bounded queue, from which
 * the loop takes its batches. It knows the newest position seen (the head) and how much it has
 * read, for lag estimates. A lost subscription is opened again after the last event read
 * (ResumingSubscription), with the queue kept; `outage` says while it is lost.
 */
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import { ResumingSubscription, type ResumingSubscriptionOptions, type SubscriptionOutage } from "../follower/resuming-subscription.js";

export type ReaderLogger = ResumingSubscriptionOptions["log"];

export class LogReader {
  queue: RecordedEvent[] = [];
  /** Newest log position the projector knows of; undefined for an empty log. */
  head: bigint | undefined;
  /** What stopped the subscription, for the loop to throw. */
  error: unknown;
  private lastRead: bigint | undefined;
  private firstRead: bigint | undefined;
  private readCount = 0;
  private generation = 0;
  private sub?: ResumingSubscription;
  private space?: () => void;

  constructor(
    private readonly events: EventStore,
    private readonly batchSize: number,
    /** Called when the loop has something to take. */
    private readonly wake: () => void,
    private readonly log: ReaderLogger,
  ) {}

  seeHead(position: bigint | undefined): void {
    if (position !== undefined && (this.head === undefined || position > this.head)) this.head = position;
  }

  /** The lost subscription not restored yet, if any. */
  get outage(): SubscriptionOutage | undefined {
    return this.sub?.outage;
  }

  /** Still reading what was in the log before it went live. */
  get catchingUp(): boolean {
    return this.head !== undefined && (this.lastRead === undefined || this.lastRead < this.head);
  }

  start(after: bigint | undefined): void {
    const gen = ++this.generation;
    this.queue = [];
    this.error = undefined;
    this.lastRead = after;
    this.firstRead = undefined;
    this.readCount = 0;
    const sub = new ResumingSubscription({ name: "projector", events: this.events, after, log: this.log });
    this.sub = sub;
    const maxQueue = this.batchSize * 4;
    void (async () => {
      try {
        for await (const e of sub) {
          if (gen !== this.generation) return;
          this.queue.push(e);
          this.lastRead = e.position;
          this.firstRead ??= e.position;
          this.readCount++;
          this.seeHead(e.position);
          if (this.queue.length === 1 || this.queue.length >= this.batchSize || e.position >= this.head!) this.wake();
          while (this.queue.length >= maxQueue && gen === this.generation) await new Promise<void>((r) => (this.space = r));
        }
        if (gen === this.generation) this.error = new Error("the log subscription ended");
      } catch (err) {
        if (gen === this.generation) this.error = err;
      }
      this.wake();
    })();
  }

  async stop(): Promise<void> {
    this.generation++;
    const sub = this.sub;
    this.sub = undefined;
    this.queue = [];
    this.release();
    await sub?.close().catch((err) => this.log.warn({ err }, "closing the log subscription failed"));
  }

  /** Takes up to `max` events from the queue. */
  take(max: number): RecordedEvent[] {
    const batch = this.queue.splice(0, max);
    this.release();
    return batch;
  }

  /**
   * Events not read yet. Positions are not dense (adapters may leave gaps), so the count is
   * estimated from the density read so far (events per position unit); exact once the reader
   * reached the head.
   */
  unread(): { events: number; exact: boolean } {
    if (this.head === undefined || (this.lastRead !== undefined && this.lastRead >= this.head)) return { events: 0, exact: true };
    const lastRead = this.lastRead ?? -1n;
    const span = this.firstRead === undefined ? 0 : Number(lastRead - this.firstRead);
    const density = this.readCount > 1 && span > 0 ? Math.min(1, (this.readCount - 1) / span) : 1;
    return { events: Math.max(1, Math.ceil(Number(this.head - lastRead) * density)), exact: false };
  }

  private release(): void {
    const r = this.space;
    this.space = undefined;
    r?.();
  }
}

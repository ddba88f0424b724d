/**
 * A subscription to the whole log that survives losing it: every follower of the log (the
 * projector's reader, the binder, the programming feed, and the LogFollower under the Placement
 * sync and the Nova notifier) reads through one.
 *
 * A store's subscription is one call that ends when the connection does (EventStoreDB: a gRPC
 * stream ends with an error on a blip or a leader change). When it ends with an error, or ends at
 * all before close(), this one opens another strictly after the last event it delivered, after a
 * backoff (backoffDelay: doubling, capped), until one works or it is closed: the consumer sees
 * the same events in the same order, with no gap and no duplicate (an event at or before the last
 * delivered position is skipped), and never sees the error.
 *
 * An outage is logged once (warn) when it begins and once (info) when it ends; the attempts in
 * between are debug lines. It ends when the new subscription delivers an event, or when the store
 * answers that nothing was missed (a read after the last position finds nothing). The backoff grows
 * with the failures since an event was last delivered, so a store that answers reads but keeps
 * ending subscriptions is not asked again every `minMs`. `outage` says
 * whether one is under way, for the followers' status (/readyz).
 */
import type { EventFilter, EventStore, RecordedEvent, Subscription } from "../../infra/eventstore/port.js";
import { backoffDelay } from "./retries.js";

export interface ResumingSubscriptionOptions {
  /** Who follows (logs and status). */
  name: string;
  events: EventStore;
  /** Exclusive: deliver events strictly after this position (omit: from the beginning). */
  after?: bigint;
  filter?: EventFilter;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void; debug?(obj: object, msg: string): void };
  /** Backoff between attempts to subscribe again (default 200 ms, doubling, to 30 s). */
  backoff?: { minMs?: number; maxMs?: number };
  /** Told when an outage begins, when an attempt fails (with the outage), and when it ends (undefined). */
  onChange?: (outage: SubscriptionOutage | undefined) => void;
}

/** A lost subscription not yet restored. */
export interface SubscriptionOutage {
  /** When the subscription was lost (ISO-8601). */
  since: string;
  /** Failed attempts so far (the loss itself is the first). */
  attempts: number;
  lastError: string;
  /** The position it resumes after (decimal string; null: the beginning). */
  resumesAfter: string | null;
}

export class ResumingSubscription implements Subscription {
  private closed = false;
  private current: Subscription | undefined;
  private lastPosition: bigint | undefined;
  private down: SubscriptionOutage | undefined;
  /**
   * Failures since an event was last delivered: the backoff grows with it, so a store that answers
   * reads but keeps ending subscriptions is not asked again every `minMs`.
   */
  private streak = 0;
  private wake: (() => void) | undefined;
  private readonly it: AsyncGenerator<RecordedEvent>;

  constructor(private readonly o: ResumingSubscriptionOptions) {
    this.lastPosition = o.after;
    this.it = this.iterate();
  }

  /** The position of the last event delivered (or `after` before the first). */
  get position(): bigint | undefined {
    return this.lastPosition;
  }

  /** The outage under way, if the subscription is lost and not restored yet. */
  get outage(): SubscriptionOutage | undefined {
    return this.down;
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    return this.it;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.current?.close().catch(() => undefined);
    await this.it.return(undefined);
  }

  private async *iterate(): AsyncGenerator<RecordedEvent> {
    while (!this.closed) {
      let sub: Subscription | undefined;
      try {
        if (this.down) await this.probe();
        if (this.closed) return;
        sub = this.current = this.o.events.subscribeToAll({ after: this.lastPosition, filter: this.o.filter });
        for await (const e of sub) {
          if (this.lastPosition !== undefined && e.position <= this.lastPosition) continue;
          this.lastPosition = e.position;
          this.streak = 0;
          if (this.down) this.restored();
          yield e;
          if (this.closed) return;
        }
        if (this.closed) return;
        throw new Error("the event log subscription ended");
      } catch (err) {
        if (this.closed) return;
        const retryInMs = backoffDelay(++this.streak, this.o.backoff);
        this.failed(err, retryInMs);
        await this.sleep(retryInMs);
      } finally {
        this.current = undefined;
        await sub?.close().catch(() => undefined);
      }
    }
  }

  /** During an outage: does the store answer, and has anything been missed? Nothing missed: restored now. */
  private async probe(): Promise<void> {
    const missed = await this.o.events.readAll({ after: this.lastPosition, filter: this.o.filter, maxCount: 1 });
    if (missed.length === 0) this.restored();
  }

  private failed(err: unknown, retryInMs: number): void {
    const message = err instanceof Error ? err.message : String(err);
    const after = this.lastPosition?.toString() ?? null;
    if (this.down) {
      this.down = { ...this.down, attempts: this.down.attempts + 1, lastError: message };
      this.o.log.debug?.({ follower: this.o.name, attempt: this.down.attempts, after, retryInMs, err: message }, "subscribing to the event log again failed; retrying after a backoff");
    } else {
      this.down = { since: new Date().toISOString(), attempts: 1, lastError: message, resumesAfter: after };
      this.o.log.warn({ follower: this.o.name, after, retryInMs, err: message }, "lost the event log subscription; subscribing again from the last event handled, with backoff");
    }
    this.o.onChange?.(this.down);
  }

  private restored(): void {
    const down = this.down!;
    this.down = undefined;
    const downMs = Date.now() - Date.parse(down.since);
    this.o.log.info({ follower: this.o.name, attempts: down.attempts, downMs, after: down.resumesAfter }, "event log subscription restored");
    this.o.onChange?.(undefined);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    }).finally(() => (this.wake = undefined));
  }
}

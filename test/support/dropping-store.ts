/**
 * An event store whose subscriptions can be lost on command, as a connection blip or a leader
 * change ends EventStoreDB's: `drop()` ends every live subscription with an error; `down()` also
 * makes new subscriptions (and the reads a follower probes with) fail until `up()`;
 * `dropAfter(position)` ends each live subscription with an error just before it would deliver an
 * event after that position (a subscription opened later is left alone).
 */
import { DelegatingEventStore } from "../../src/infra/eventstore/delegating-store.js";
import type { EventStore, ReadAllOptions, RecordedEvent, SubscribeOptions, Subscription } from "../../src/infra/eventstore/port.js";

export class DroppingStore extends DelegatingEventStore {
  private readonly live = new Map<(err: Error) => void, { breakAfter?: bigint }>();
  /** Subscriptions ended with an error so far. */
  dropped = 0;
  private unreachable: Error | undefined;
  /** Subscriptions opened so far. */
  opened = 0;
  private openWaiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(inner: EventStore) {
    super(inner);
  }

  /** Subscriptions open now. */
  get liveCount(): number {
    return this.live.size;
  }

  /** Ends every live subscription with an error (the store stays reachable: followers subscribe again). */
  drop(err = new Error("connection to the event store lost")): void {
    for (const fail of [...this.live.keys()]) fail(err);
  }

  /** Each subscription live now ends with an error instead of delivering its first event after `position`. */
  dropAfter(position: bigint): void {
    for (const marks of this.live.values()) marks.breakAfter = position;
  }

  /** Ends every live subscription, and fails new ones and reads of the log, until up(). */
  down(err = new Error("event store unreachable")): void {
    this.unreachable = err;
    this.drop(err);
  }

  up(): void {
    this.unreachable = undefined;
  }

  /** Resolves once `count` subscriptions in all have been opened. */
  openedAtLeast(count: number): Promise<void> {
    if (this.opened >= count) return Promise.resolve();
    return new Promise((resolve) => this.openWaiters.push({ count, resolve }));
  }

  override readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    if (this.unreachable) return Promise.reject(this.unreachable);
    return super.readAll(options);
  }

  override subscribeToAll(options?: SubscribeOptions): Subscription {
    this.opened++;
    this.openWaiters = this.openWaiters.filter((w) => (this.opened >= w.count ? (w.resolve(), false) : true));
    const refused = this.unreachable;
    const inner = super.subscribeToAll(options);
    let fail!: (err: Error) => void;
    const failure = new Promise<never>((_, reject) => (fail = reject));
    failure.catch(() => undefined);
    const live = this.live;
    const marks: { breakAfter?: bigint } = {};
    live.set(fail, marks);
    const counted = () => this.dropped++;
    async function* iterate(): AsyncGenerator<RecordedEvent> {
      try {
        if (refused) throw refused;
        const it = inner[Symbol.asyncIterator]();
        for (;;) {
          const next = await Promise.race([it.next(), failure]);
          if (next.done) return;
          if (marks.breakAfter !== undefined && next.value.position > marks.breakAfter) throw new Error(`connection to the event store lost after position ${marks.breakAfter}`);
          yield next.value;
        }
      } catch (err) {
        counted();
        throw err;
      } finally {
        live.delete(fail);
        await inner.close();
      }
    }
    const it = iterate();
    return {
      [Symbol.asyncIterator]: () => it,
      async close() {
        live.delete(fail);
        await inner.close();
        await it.return(undefined);
      },
    };
  }
}

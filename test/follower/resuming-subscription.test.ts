/**
 * The one subscription every follower of the log reads through: a lost subscription is opened
 * again after the last event delivered, with backoff; the consumer sees no gap, no duplicate and
 * no error; the outage is logged once when it begins and once when it ends.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { RecordedEvent, Subscription } from "../../src/infra/eventstore/port.js";
import { DelegatingEventStore } from "../../src/infra/eventstore/delegating-store.js";
import { ResumingSubscription } from "../../src/reactors/follower/resuming-subscription.js";
import { DroppingStore } from "../support/dropping-store.js";
import { capturingLogger } from "../support/log-lines.js";

const LOST = "lost the event log subscription; subscribing again from the last event handled, with backoff";
const RESTORED = "event log subscription restored";

const event = (type = "Thing") => ({ id: randomUUID(), type, data: {}, metadata: { principal: "test", correlationId: "c", causationId: "c", at: new Date().toISOString() } });
const appendN = async (store: MemoryEventStore, n: number, type?: string) => {
  for (let i = 0; i < n; i++) await store.append(`s-${randomUUID()}`, [event(type)], "no_stream");
};

const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const s of closing.splice(0)) await s.close();
});

/** Reads `sub` in the background; `upTo(p)` resolves once an event at `p` or after was read. */
function reader(sub: ResumingSubscription) {
  const got: RecordedEvent[] = [];
  let waiting: Array<{ p: bigint; resolve: () => void }> = [];
  const done = (async () => {
    for await (const e of sub) {
      got.push(e);
      waiting = waiting.filter((w) => (e.position >= w.p ? (w.resolve(), false) : true));
    }
  })();
  const upTo = (p: bigint) => (got.some((e) => e.position >= p) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ p, resolve })));
  return { got, upTo, done };
}

function resuming(store: DroppingStore | MemoryEventStore | DelegatingEventStore, over: Partial<ConstructorParameters<typeof ResumingSubscription>[0]> = {}) {
  const { log, said } = capturingLogger();
  const sub = new ResumingSubscription({ name: "test-follower", events: store, log, backoff: { minMs: 5, maxMs: 20 }, ...over });
  closing.push(sub);
  return { sub, said };
}

describe("a resuming subscription", () => {
  it("delivers every event once, in order, across lost subscriptions, logging each outage once and its end once", async () => {
    const inner = new MemoryEventStore();
    const store = new DroppingStore(inner);
    await appendN(inner, 3);
    const { sub, said } = resuming(store);
    const r = reader(sub);
    await r.upTo(3n);
    for (let round = 0; round < 3; round++) {
      store.drop();
      await appendN(inner, 2);
      await r.upTo((await inner.headPosition())!);
    }
    expect(r.got.map((e) => e.position)).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n]);
    expect(store.dropped).toBe(3);
    expect(said(LOST, { follower: "test-follower" })).toHaveLength(3);
    expect(said(RESTORED, { follower: "test-follower" })).toHaveLength(3);
    expect(sub.outage).toBeUndefined();
  });

  it("while the store stays unreachable: one outage with its attempts counted, then what was appended meanwhile", async () => {
    const inner = new MemoryEventStore();
    const store = new DroppingStore(inner);
    await appendN(inner, 1);
    const { sub, said } = resuming(store);
    const r = reader(sub);
    await r.upTo(1n);
    store.down();
    await appendN(inner, 2);
    await expect.poll(() => sub.outage?.attempts ?? 0).toBeGreaterThanOrEqual(3);
    expect(sub.outage).toMatchObject({ resumesAfter: "1", lastError: "event store unreachable" });
    expect(said(LOST)).toHaveLength(1);
    expect(said(RESTORED)).toHaveLength(0);
    expect(said("subscribing to the event log again failed; retrying after a backoff").length).toBeGreaterThanOrEqual(2);
    store.up();
    await r.upTo(3n);
    expect(r.got.map((e) => e.position)).toEqual([1n, 2n, 3n]);
    expect(sub.outage).toBeUndefined();
    expect(said(RESTORED)).toHaveLength(1);
    expect(said(RESTORED)[0]).toMatchObject({ after: "1" });
    expect(said(RESTORED)[0]!.attempts).toBeGreaterThanOrEqual(3);
  });

  it("is restored without an event when nothing was missed (a filter that matches nothing new)", async () => {
    const inner = new MemoryEventStore();
    const store = new DroppingStore(inner);
    await appendN(inner, 1, "Wanted");
    const { sub, said } = resuming(store, { filter: { eventTypes: ["Wanted"] } });
    const r = reader(sub);
    await r.upTo(1n);
    store.down();
    await appendN(inner, 2, "Other");
    await expect.poll(() => sub.outage?.attempts ?? 0).toBeGreaterThanOrEqual(2);
    store.up();
    await expect.poll(() => sub.outage).toBeUndefined();
    expect(said(RESTORED)).toHaveLength(1);
    await appendN(inner, 1, "Wanted");
    await r.upTo(4n);
    expect(r.got.map((e) => e.type)).toEqual(["Wanted", "Wanted"]);
  });

  it("takes a subscription that ends without an error for a lost one", async () => {
    const inner = new MemoryEventStore();
    await appendN(inner, 2);
    let opened = 0;
    const ending = new (class extends DelegatingEventStore {
      override subscribeToAll(o?: Parameters<MemoryEventStore["subscribeToAll"]>[0]): Subscription {
        // The first one hands one event, then ends as a server closing the stream would.
        if (opened++ > 0) return super.subscribeToAll(o);
        const sub = super.subscribeToAll(o);
        return {
          async *[Symbol.asyncIterator]() {
            for await (const e of sub) {
              yield e;
              return;
            }
          },
          close: () => sub.close(),
        };
      }
    })(inner);
    const { sub, said } = resuming(ending);
    const r = reader(sub);
    await r.upTo(2n);
    expect(r.got.map((e) => e.position)).toEqual([1n, 2n]);
    expect(said(LOST)[0]).toMatchObject({ err: "the event log subscription ended", after: "1" });
  });

  it("backs off longer each time when the store answers reads but keeps ending subscriptions before any event", async () => {
    const inner = new MemoryEventStore();
    await appendN(inner, 1);
    const failing = new (class extends DelegatingEventStore {
      override subscribeToAll(): Subscription {
        return {
          async *[Symbol.asyncIterator]() {
            throw new Error("subscription refused");
          },
          close: async () => undefined,
        };
      }
    })(inner);
    const { sub, said } = resuming(failing, { after: 1n });
    void reader(sub).done;
    await expect.poll(() => said(LOST).length).toBeGreaterThanOrEqual(4);
    await sub.close();
    // Each probe finds nothing missed (an outage ends), yet the backoff keeps doubling up to its cap.
    expect(said(LOST).slice(0, 4).map((l) => l.retryInMs)).toEqual([5, 10, 20, 20]);
  });

  it("closes at once during an outage, and its reader ends", async () => {
    const inner = new MemoryEventStore();
    const store = new DroppingStore(inner);
    const { sub } = resuming(store, { backoff: { minMs: 60_000 } });
    const r = reader(sub);
    store.down();
    await expect.poll(() => sub.outage).toBeDefined();
    await sub.close();
    await r.done;
    expect(store.liveCount).toBe(0);
  });
});

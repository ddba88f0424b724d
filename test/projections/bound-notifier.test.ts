import { afterEach, describe, expect, it } from "vitest";
import { BoundNotifier } from "../../projections/arqs/bound-notifier.js";
import { projections } from "../../projections/index.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { InProcessPubSub } from "../../src/infra/pubsub/in-process.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { eventually, listen } from "../readstore/support.js";
import { append, arqCreated, bindFailed, bindStarted, bound, unbound } from "./support.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(es = new MemoryEventStore(), store = new MemoryReadStore()) {
  const pubsub = new InProcessPubSub();
  const listener = await listen(pubsub, store);
  cleanups.push(() => listener.close());
  let notifier: BoundNotifier | undefined;
  const start = async () => {
    notifier = new BoundNotifier(pubsub, store, console);
    const projector = new Projector({ events: es, store, projections, hooks: [notifier], batchSize: 5, healthCheckMs: 20 });
    cleanups.push(() => projector.stop());
    await projector.start();
    return projector;
  };
  return { es, store, pubsub, listener, start, published: () => notifier?.published };
}

const summary = (r: { notification: { tag: string; status: string; reason: string | null; serverUuid: string }; stateOnReceipt: string | null }) =>
  `${r.notification.tag} ${r.notification.status} ${r.notification.serverUuid} ${r.stateOnReceipt}${r.notification.reason ? ` (${r.notification.reason})` : ""}`;

describe("accelerator-request-bound notifications", () => {
  it("sends one per bind, after the read model shows the new state", async () => {
    const { es, listener, start, published } = await setup();
    const runner = await start();
    await append(es, [arqCreated("a1"), bindStarted("a1", "h1", "i1"), bound("a1", { instance: "i1" })]);
    await append(es, [arqCreated("a2"), bindStarted("a2", "h1", "i2"), bindFailed("a2", "no free attach handle", "i2")]);
    // BOUND -> BIND_FAILED (device lost) is not a bind completion; unbind -> bind again is a new bind.
    await append(es, [bindFailed("a1", "device lost", "i1"), unbound("a1"), bindStarted("a1", "h1", "i3"), bound("a1", { instance: "i3" })]);
    await runner.caughtUp();
    await eventually(() => expect(listener.received).toHaveLength(3));
    expect(listener.received.map(summary)).toEqual(["a1 COMPLETED i1 BOUND", "a2 FAILED i2 BIND_FAILED (no free attach handle)", "a1 COMPLETED i3 BOUND"]);
    expect(listener.received[0]!.notification).toEqual({
      name: "accelerator-request-bound",
      serverUuid: "i1",
      tag: "a1",
      status: "COMPLETED",
      reason: null,
      position: "3",
    });
    expect(published()).toBe(3);
  });

  it("sends nothing for old binds on a rebuild, or on a fresh store over an old log", async () => {
    const es = new MemoryEventStore();
    await append(es, [arqCreated("old"), bindStarted("old"), bound("old")]);
    const { listener, start } = await setup(es);
    const runner = await start(); // fresh store: the log so far is history
    await runner.rebuild();
    await append(es, [arqCreated("new"), bindStarted("new"), bound("new")]);
    await runner.caughtUp();
    await eventually(() => expect(listener.received.map(summary)).toEqual(["new COMPLETED inst-1 BOUND"]));
    await runner.rebuild();
    // Notifications go out in log order, never one before a position already sent: after the next
    // bind's, none can come for what the rebuild replayed.
    await append(es, [arqCreated("last"), bindStarted("last"), bound("last")]);
    await eventually(() => expect(listener.received.map(summary)).toEqual(["new COMPLETED inst-1 BOUND", "last COMPLETED inst-1 BOUND"]));
  });

  it("on restart, notifies once the binds that resolved after the stored checkpoint", async () => {
    const es = new MemoryEventStore();
    const store = new MemoryReadStore();
    const first = await setup(es, store);
    const r1 = await first.start();
    await append(es, [arqCreated("a1"), bindStarted("a1"), bound("a1"), arqCreated("a2"), bindStarted("a2", "h1", "i2"), arqCreated("a3"), bindStarted("a3", "h1", "i3"), bound("a3", { instance: "i3" })]);
    await r1.caughtUp();
    await eventually(() => expect(first.listener.received.map(summary)).toEqual(["a1 COMPLETED inst-1 BOUND", "a3 COMPLETED i3 BOUND"]));
    await r1.stop();

    // While no runner runs: a2's bind fails (it started before the restart), a3 loses its device.
    await append(es, [bindFailed("a2", "timeout", "i2"), bindFailed("a3", "device lost", "i3"), arqCreated("a4"), bindStarted("a4"), bound("a4")]);
    const second = await setup(es, store);
    const r2 = await second.start();
    await append(es, [arqCreated("a5"), bindStarted("a5"), bound("a5")]);
    await eventually(() =>
      expect(second.listener.received.map(summary)).toEqual(["a2 FAILED i2 BIND_FAILED (timeout)", "a4 COMPLETED inst-1 BOUND", "a5 COMPLETED inst-1 BOUND"]),
    );
    await r2.stop();
  });

  it("does not notify binds again when it heals a store that lost its data", async () => {
    const { es, store, listener, start } = await setup();
    const runner = await start();
    await append(es, [arqCreated("a1"), bindStarted("a1"), bound("a1")]);
    await runner.caughtUp();
    await eventually(() => expect(listener.received).toHaveLength(1));
    store.flushAll();
    await eventually(async () => expect(await store.getCheckpoint("arqs")).toBeDefined());
    await runner.caughtUp();
    await append(es, [arqCreated("a2"), bindStarted("a2"), bound("a2")]);
    await runner.caughtUp();
    await eventually(() => expect(listener.received.map((r) => r.notification.tag)).toEqual(["a1", "a2"]));
  });
});

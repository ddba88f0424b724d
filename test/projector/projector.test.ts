import { afterEach, describe, expect, it } from "vitest";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { getArqs } from "../../projections/arqs/queries.js";
import { projections } from "../../projections/index.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import type { ProjectorOptions } from "../../src/reactors/projector/options.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { append, arqCreated, bindStarted, gpuHost } from "../projections/support.js";
import { CrashingStore, dumpAll, eventually, mixedLog } from "../readstore/support.js";
import { HeldWrites } from "../support/held-writes.js";
import { gappyLog } from "./support.js";

const names = projections.map((p) => p.name);
const runners: Projector[] = [];
function runner(options: Partial<ProjectorOptions> & Pick<ProjectorOptions, "events" | "store">): Projector {
  const r = new Projector({ projections, batchSize: 10, healthCheckMs: 20, ...options });
  runners.push(r);
  return r;
}
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
});

/** The read models a one-shot rebuild gives for the log of `es`. */
async function oneShot(es: MemoryEventStore) {
  const store = new MemoryReadStore();
  await new Projector({ events: es, store, projections, batchSize: 1000 }).rebuild();
  return dumpAll(store, names);
}

describe("projector", () => {
  it("catches up from position 0 on a fresh memory store (embedded start), then goes live", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog());
    const head = (await es.headPosition())!;
    const store = new MemoryReadStore();
    const r = runner({ events: es, store });
    expect(await store.serving(names)).toEqual(names.map(() => false));
    await r.start();
    // Readers may use the models once start() resolves.
    expect(await store.serving(names)).toEqual(names.map(() => true));
    for (const s of r.status()) {
      expect(s).toMatchObject({ checkpoint: head.toString(), headPosition: head.toString(), lagEvents: 0, lagMs: 0, state: "live" });
    }
    expect(await dumpAll(store, names)).toEqual(await oneShot(es));
    // Checkpoints moved without writes are saved by the next health check.
    await eventually(async () => expect(await store.getCheckpoints(names)).toEqual(names.map(() => head)));

    await append(es, [arqCreated("late")]);
    await r.waitFor((await es.headPosition())!);
    expect((await getArqs(store, ["late"]))[0]?.state).toBe("INITIAL");
    await r.caughtUp();
  });

  it("gives identical read models when the whole log is replayed twice", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog());
    const store = new MemoryReadStore();
    const r = new Projector({ events: es, store, projections, rebuildBatchSize: 13 });
    await r.rebuild();
    const first = await dumpAll(store, names);
    await r.rebuild();
    expect(await dumpAll(store, names)).toEqual(first);
    // A live runner (subscription, event by event at the end) builds the same thing.
    const live = new MemoryReadStore();
    const lr = runner({ events: es, store: live, batchSize: 1 });
    await lr.start();
    expect(await dumpAll(live, names)).toEqual(first);
  });

  it("loses and duplicates nothing when killed between batches and restarted from its checkpoint", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog(4, 8));
    const expected = await oneShot(es);
    const head = (await es.headPosition())!;
    const store = new MemoryReadStore();
    for (const okBatches of [3, 17, 29]) {
      const crashing = new CrashingStore(store, okBatches);
      const r1 = new Projector({ events: es, store: crashing, projections, batchSize: 10, healthCheckMs: 20 });
      void r1.start().catch(() => undefined);
      await eventually(() => expect(crashing.crashed).toBe(true));
      await r1.stop();
      const cps = await store.getCheckpoints(names);
      expect(cps.some((c) => c === undefined || c < head)).toBe(true); // it did stop mid-way
    }
    const r2 = runner({ events: es, store });
    await r2.start();
    expect(await dumpAll(store, names)).toEqual(expected);
  });

  it("heals a store that lost its data while running, without a restart", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog());
    const store = new MemoryReadStore();
    const r = runner({ events: es, store });
    await r.start();
    store.flushAll();
    expect(await store.serving(names)).toEqual(names.map(() => false));
    // Nothing is appended: the health check finds the markers gone and rebuilds.
    await eventually(async () => expect(await store.getCheckpoints(names)).not.toContain(undefined));
    await r.caughtUp();
    expect(await dumpAll(store, names)).toEqual(await oneShot(es));
    await eventually(async () => expect(await store.serving(names)).toEqual(names.map(() => true)));

    store.flushAll();
    await append(es, [arqCreated("after-flush")]);
    await eventually(async () => expect((await getArqs(store, ["after-flush"]))[0]).not.toBeNull());
    await r.caughtUp();
    expect(await dumpAll(store, names)).toEqual(await oneShot(es));
  });

  it("takes the serving mark from a model whose store went back to an older checkpoint, until it caught up", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog());
    const store = new MemoryReadStore();
    const unmarked: string[] = [];
    const unmark = store.unmarkServing.bind(store);
    store.unmarkServing = async (p) => (unmarked.push(p), unmark(p));
    const r = runner({ events: es, store });
    await r.start();
    // As a restored snapshot would: the arqs model at an older checkpoint, still marked serving.
    await store.drop("arqs");
    await store.applyBatch("arqs", [], 1n, null);
    expect(await store.markServing("arqs", 1n)).toBe(true);
    await eventually(() => expect(unmarked).toContain("arqs"));
    await eventually(async () => expect(await store.serving(["arqs"])).toEqual([true]));
    await r.caughtUp();
    expect(await dumpAll(store, names)).toEqual(await oneShot(es));
  });

  it("rebuilds some read models while running; the others go on", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog());
    const store = new MemoryReadStore();
    const r = runner({ events: es, store });
    await r.start();
    const seen = new Set<string>();
    const servingWhile = new Set<string>();
    await r.rebuild(["arqs"], () => {
      seen.add(r.status().find((s) => s.name === "arqs")!.state);
      void store.serving(names).then((v) => servingWhile.add(JSON.stringify(v)));
    });
    expect(seen).toContain("rebuilding");
    // While arqs was being replayed, readers were kept from it, and only from it.
    expect([...servingWhile]).toContain(JSON.stringify(names.map((n) => n !== "arqs")));
    expect(await store.serving(names)).toEqual(names.map(() => true));
    expect(r.status().every((s) => s.state === "live")).toBe(true);
    expect(await dumpAll(store, names)).toEqual(await oneShot(es));
  });

  it("waitFor times out, and a stop rejects the waiters", async () => {
    const es = new MemoryEventStore();
    await append(es, [arqCreated("a1")]);
    const r = runner({ events: es, store: new MemoryReadStore() });
    await r.start();
    await r.waitFor(1n);
    await expect(r.waitFor(99n, { timeoutMs: 30 })).rejects.toThrow(/did not reach position 99/);
    const pending = r.waitFor(100n);
    await r.stop();
    await expect(pending).rejects.toThrow(/stopped/);
    expect(r.status().every((s) => s.state === "stopped")).toBe(true);
    await expect(r.waitFor(100n)).rejects.toThrow(/not running/);
  });

  it("stops a projection whose project() throws, and keeps the others live", async () => {
    const es = new MemoryEventStore();
    await append(es, [...gpuHost("h1"), arqCreated("a1")]);
    const broken: Projection = {
      name: "broken",
      eventTypes: ["ArqCreated"],
      project: () => {
        throw new Error("boom");
      },
    };
    const store = new MemoryReadStore();
    const r = runner({ events: es, store, projections: [...projections, broken] });
    await r.start();
    const status = r.status();
    expect(status.find((s) => s.name === "broken")).toMatchObject({ state: "stopped", error: expect.stringContaining("boom") });
    expect(status.filter((s) => s.name !== "broken").every((s) => s.state === "live")).toBe(true);
    await append(es, [bindStarted("a1")]);
    await r.caughtUp();
    expect((await getArqs(store, ["a1"]))[0]?.state).toBe("BIND_STARTED");
  });

  it("reports its lag while catching up", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog(6, 8));
    const head = (await es.headPosition())!;
    const held = new HeldWrites();
    held.close();
    const r = runner({ events: es, store: held.wrap(new MemoryReadStore()) });
    const started = r.start();
    await held.held;
    const s = r.status()[0]!;
    held.open();
    expect(s).toMatchObject({ state: "catching-up", checkpoint: null, headPosition: head.toString(), lagEvents: Number(head) });
    expect(s.lagMs).toBeGreaterThanOrEqual(0);
    await started;
    expect(r.status()[0]).toMatchObject({ state: "live", lagEvents: 0, lagMs: 0 });
  });

  it("counts lag in events, not positions, when the log has gaps", async () => {
    const inner = new MemoryEventStore();
    await append(inner, mixedLog(6, 8));
    const events = await inner.readAll();
    // More events than the reader queues (4 batches): part of the lag is estimated from the gaps read so far.
    expect(events.length).toBeGreaterThan(4 * 10 * 2);
    const held = new HeldWrites((projection, writes) => projection === "arqs" && writes.length > 0);
    held.close();
    const r = runner({ events: gappyLog(inner, 10n), store: held.wrap(new MemoryReadStore()) });
    const arqs = () => r.status().find((s) => s.name === "arqs")!;
    const started = r.start();
    await held.held;
    const behind = arqs();
    held.open();
    const notApplied = events.filter((e) => behind.checkpoint === null || e.position * 10n > BigInt(behind.checkpoint)).length;
    expect(behind).toMatchObject({ state: "catching-up", headPosition: String(events.length * 10), lagEvents: notApplied });
    await started;
    expect(arqs()).toMatchObject({ checkpoint: String(events.length * 10), state: "live", lagEvents: 0 });

    // Live: one event 10 positions ahead is one event of lag.
    held.close();
    await append(inner, [arqCreated("g1")]);
    await held.held;
    const live = arqs();
    held.open();
    expect(live).toMatchObject({ checkpoint: String(events.length * 10), headPosition: String((events.length + 1) * 10), lagEvents: 1 });
    await r.caughtUp();
    expect(arqs()).toMatchObject({ state: "live", lagEvents: 0 });
  });
});

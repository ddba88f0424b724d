/**
 * Every follower of the log survives losing its subscription at any point of a bind: the binder,
 * the projector, the programming feed (which the host's agent waits on) and a LogFollower. The
 * bind needs its region programmed, so it runs through every follower: ArqBindStarted, the
 * binder's allocation and programming request, the agent's result, the binder's ArqBound. The
 * subscriptions are lost after each of its positions in turn; then a second bind on another
 * host (the next events) must go through the same way, and every read model and checkpoint must
 * hold each event once. It runs on the memory store, its subscriptions lost by DroppingStore, and
 * on the EventStoreDB adapter over the stand-in, whose subscriptions end with the UNAVAILABLE error
 * the client gives when the connection drops.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getArqs } from "../../projections/arqs/queries.js";
import { projections } from "../../projections/index.js";
import { ProgrammingFeed } from "../../src/api/programming-feed.js";
import { Application } from "../../src/app/application.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { Binder } from "../../src/reactors/binder/binder.js";
import { LogFollower } from "../../src/reactors/follower/log-follower.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { fpgaRegion } from "../app/support.js";
import { DroppingStore } from "../support/dropping-store.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";
import { capturingLogger } from "../support/log-lines.js";

const LOST = "lost the event log subscription; subscribing again from the last event handled, with backoff";
const RESTORED = "event log subscription restored";
const FOLLOWERS = ["binder", "projector", "programming-feed", "drop-test"];
const HOSTS = ["compute1", "compute2"];
const BACKOFF = { minMs: 5, maxMs: 20 };

const ctx = (over: Partial<CommandContext> = {}): CommandContext => ({
  principal: "nova",
  correlationId: randomUUID(),
  causationId: randomUUID(),
  at: new Date().toISOString(),
  projectId: "p1",
  isAdmin: true,
  ...over,
});

const cleanups: Array<() => Promise<void> | void> = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeEach(() => void process.on("unhandledRejection", onUnhandled));
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  process.off("unhandledRejection", onUnhandled);
});

/** A store whose subscriptions can be lost once, just before the event after the first `count` written from now reaches them. */
interface Backend {
  store: EventStore;
  dropAfterNext(count: number): Promise<void>;
}

const backends: Array<[string, () => Backend]> = [
  [
    "the memory store",
    () => {
      const store = new DroppingStore(new MemoryEventStore());
      return {
        store,
        // The memory store's positions are 1, 2, 3, ...: the count-th event from now is at head + count.
        dropAfterNext: async (count) => store.dropAfter(((await store.headPosition()) ?? 0n) + BigInt(count)),
      };
    },
  ],
  [
    "the EventStoreDB adapter over the stand-in",
    () => {
      const server = new EsdbStandIn();
      const store = new EsdbEventStore(server.connect());
      cleanups.push(() => store.close());
      const deliver = server.log.onWrite!;
      let left: number | undefined;
      // The server ends every open subscription when the write that carries the event after the
      // first `count` arrives, before that write reaches them (what they buffered is lost with them).
      server.log.onWrite = (events) => {
        if (left !== undefined) {
          left -= events.filter((e) => !e.streamId.startsWith("$")).length;
          if (left < 0) {
            left = undefined;
            server.dropSubscriptions();
          }
        }
        deliver(events);
      };
      return { store, dropAfterNext: async (count) => void (left = count) };
    },
  ],
];

/** Two hosts with a programmable region, a profile that needs bitstream `a`, two ARQs, and every follower running. */
async function world(backend: () => Backend) {
  const { store, dropAfterNext } = backend();
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-drop-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const app = new Application({ store, bitstreams: { contentDir: dir } });
  for (const h of HOSTS) await app.reportHostInventory(ctx(), h, [fpgaRegion(h)]);
  const a = await app.uploadBitstream(ctx({ principal: "admin" }), { name: "a.gbs", functionId: "fa", regionType: "r1", vendor: "fake" }, Readable.from([Buffer.from("a bits")]));
  await app.createDeviceProfile(ctx(), { name: "prog", groups: [{ "resources:FPGA": "1", "accel:bitstream_id": a.id }] });
  const arqs: string[] = [];
  for (const _ of HOSTS) arqs.push((await app.createArqs(ctx(), { deviceProfileName: "prog" }))[0]!.uuid);

  const { log, said } = capturingLogger();
  const binder = new Binder({ store, app, log, bindTimeoutMs: 60_000, backoff: BACKOFF });
  await binder.start();
  cleanups.push(() => binder.stop());
  const readStore = new MemoryReadStore();
  const projector = new Projector({ events: store, store: readStore, projections, log, healthCheckMs: 50 });
  await projector.start();
  cleanups.push(() => projector.stop());
  const feed = new ProgrammingFeed(store, log);
  cleanups.push(() => feed.close());
  for (const h of HOSTS) await agent(feed, app, h);
  const handled: bigint[] = [];
  const follower = new LogFollower({ name: "drop-test", events: store, checkpoints: new MemoryReadStore(), log, statusEveryMs: 0, backoff: BACKOFF, handle: async (batch) => void handled.push(...batch.map((e) => e.position)) });
  await follower.start();
  cleanups.push(() => follower.stop());
  return { store, dropAfterNext, app, arqs, binder, projector, readStore, feed, follower, handled, said };
}

/** The host's agent: programs its region as each request reaches it through the programming feed. */
async function agent(feed: ProgrammingFeed, app: Application, hostname: string) {
  const listener = feed.listen(hostname);
  await listener.ready;
  const loop = (async () => {
    for await (const requestId of listener.events) {
      const request = (await app.programmingInFlight(hostname)).find((r) => r.requestId === requestId);
      if (!request) continue;
      await app.reportProgrammingResult(ctx({ principal: `agent:${hostname}` }), { hostname, deployableUuid: request.deployableUuid, requestId, ok: true, command: ["fake-program"], durationMs: 1 });
    }
  })();
  cleanups.push(async () => {
    listener.close();
    await loop;
  });
}

type World = Awaited<ReturnType<typeof world>>;

async function bind(w: World, i: number): Promise<void> {
  const hostname = HOSTS[i]!;
  await w.app.startBinds(ctx(), [{ arqUuid: w.arqs[i]!, hostname, deviceRpUuid: rpUuidFor(`${hostname}_FakeDevice`), instanceUuid: randomUUID() }]);
  await expect.poll(async () => (await w.app.getArq(w.arqs[i]!))?.state, { timeout: 10_000 }).toBe("BOUND");
}

/** Binds on the first host (the subscriptions lost after `dropAfter` events of it), then on the second; checks every follower. */
async function scenario(backend: () => Backend, dropAfter?: number): Promise<{ bindEvents: number; types: string[] }> {
  const w = await world(backend);
  const start = (await w.store.headPosition())!;
  if (dropAfter !== undefined) await w.dropAfterNext(dropAfter);
  await bind(w, 0);
  const afterFirst = (await w.store.headPosition())!;
  await bind(w, 1);
  const head = (await w.store.headPosition())!;
  const all = await w.store.readAll();

  // The binder allocated and finished both binds (the mutation only started them).
  await w.binder.idle();
  expect(w.binder.status()).toMatchObject({ name: "binder", state: "live", checkpoint: head.toString() });
  // The projector: both ARQs BOUND in the read model, every projection at the head.
  await w.projector.caughtUp({ timeoutMs: 5_000 });
  expect((await getArqs(w.readStore, w.arqs)).map((a) => a?.state)).toEqual(["BOUND", "BOUND"]);
  for (const s of w.projector.status()) expect(s.outage).toBeUndefined();
  // The LogFollower: every event handed once, in order.
  await w.follower.caughtUp(5_000);
  expect(w.handled).toEqual(all.map((e) => e.position));
  expect(w.follower.status()).toMatchObject({ state: "live", retries: 0 });
  // The programming feed reached both agents (the binds waited for their programming).
  expect(w.feed.status()).toMatchObject({ state: "live", retries: 0 });

  if (dropAfter !== undefined) {
    // Each follower lost its subscription once, said so once, and said once that it was back.
    for (const follower of FOLLOWERS) {
      expect(w.said(LOST, { follower }), follower).toHaveLength(1);
      expect(w.said(RESTORED, { follower }), follower).toHaveLength(1);
    }
  }
  const first = all.filter((e) => e.position > start && e.position <= afterFirst);
  return { bindEvents: first.length, types: first.map((e) => e.type) };
}

describe.each(backends)("a follower of the log that loses its subscription during a bind, on %s", (_, backend) => {
  it("handles the next events at every point: binder, projector, programming feed and LogFollower", async () => {
    const { bindEvents, types } = await scenario(backend);
    // The bind's own points: ArqBindStarted, the allocation and the programming request, the result, ArqBound.
    expect(types).toEqual(expect.arrayContaining(["ArqBindStarted", "RegionProgrammingRequested", "RegionProgrammed", "ArqBound"]));
    for (let k = 0; k <= bindEvents; k++) {
      const run = await scenario(backend, k);
      // The same bind, whatever the drop.
      expect(run.types, `dropped after ${k} of ${types.join(", ")}`).toEqual(types);
      for (const c of cleanups.splice(0).reverse()) await c();
    }
    expect(unhandled).toEqual([]);
  }, 120_000);
});

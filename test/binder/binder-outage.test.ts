/**
 * The binder while its subscription to the log is lost (the store unreachable for reads): it keeps
 * the binds it folded and times them out meanwhile, then reads on from its last event, times out
 * a bind it learns of late, and allocates the next one. On the memory store (DroppingStore) and on
 * the EventStoreDB adapter over the stand-in, which fails $all with the client's UNAVAILABLE error.
 */
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { Binder } from "../../src/reactors/binder/binder.js";
import { fpga } from "../app/support.js";
import { DroppingStore } from "../support/dropping-store.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";
import { capturingLogger } from "../support/log-lines.js";

const LOST = "lost the event log subscription; subscribing again from the last event handled, with backoff";
const RESTORED = "event log subscription restored";

const ctx = (): CommandContext => ({ principal: "nova", correlationId: randomUUID(), causationId: randomUUID(), at: new Date().toISOString(), projectId: "p1", isAdmin: true });

const cleanups: Array<() => Promise<void> | void> = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeEach(() => void process.on("unhandledRejection", onUnhandled));
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  process.off("unhandledRejection", onUnhandled);
});

/** A store whose log can be made unreachable for reads of the whole log and subscriptions, and the error that says so. */
interface Backend {
  store: EventStore;
  down(): void;
  up(): void;
  error: string;
}

const backends: Array<[string, () => Backend]> = [
  [
    "the memory store",
    () => {
      const store = new DroppingStore(new MemoryEventStore());
      return { store, down: () => store.down(), up: () => store.up(), error: "event store unreachable" };
    },
  ],
  [
    "the EventStoreDB adapter over the stand-in",
    () => {
      const server = new EsdbStandIn();
      const store = new EsdbEventStore(server.connect());
      cleanups.push(() => store.close());
      return { store, down: () => server.loseAll(), up: () => server.reachAll(), error: "the connection to the server was lost" };
    },
  ],
];

describe.each(backends)("the binder, when its subscription to the log is lost, on %s", (_, backend) => {
  it("keeps its binds in flight, times them out during the outage and after it, and allocates the next bind", async () => {
    const { store, down, up, error } = backend();
    const app = new Application({ store });
    await app.reportHostInventory(ctx(), "compute1", [fpga("compute1", "0c", 4)]);
    await app.createDeviceProfile(ctx(), { name: "one", groups: [{ "resources:FPGA": "1" }] });
    const rp = rpUuidFor("compute1_0000:0c:00.0");
    const newArq = async () => (await app.createArqs(ctx(), { deviceProfileName: "one" }))[0]!.uuid;
    const start = (arqUuid: string) => app.startBinds(ctx(), [{ arqUuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: randomUUID() }]);
    const state = async (arqUuid: string) => (await app.getArq(arqUuid))!;

    // The binder's clock moves only when the test moves it; allocations wait until released.
    const clock = { now: Date.now() };
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const holding = new Set<string>();
    const { log, said } = capturingLogger();
    const binder = new Binder({ store, app, log, bindTimeoutMs: 60_000, now: () => clock.now, backoff: { minMs: 5, maxMs: 20 }, beforeAllocate: (arq) => (holding.add(arq), held) });
    await binder.start();
    cleanups.push(() => binder.stop());
    cleanups.push(() => release());

    const x = await newArq();
    await start(x);
    await expect.poll(() => holding.has(x)).toBe(true);

    down();
    await expect.poll(() => binder.status().outage?.attempts ?? 0).toBeGreaterThanOrEqual(2);
    expect(binder.status()).toMatchObject({ state: "retrying", error: expect.stringContaining(error) });
    // A bind started while the binder cannot read the log.
    const z = await newArq();
    await start(z);
    expect(binder.bindsInFlight).toBe(1);

    // x outlives BIND_TIMEOUT_S during the outage: the binder fails it (its clock is its own).
    clock.now += 120_000;
    await expect.poll(async () => (await state(x)).state).toBe("BIND_FAILED");
    expect((await state(x)).bindFailureReason).toMatch(/BIND_TIMEOUT_S/);
    expect((await state(z)).state).toBe("BIND_STARTED");

    // Back: the binder reads on from its last event, learns of z, and times it out too.
    up();
    await expect.poll(async () => (await state(z)).state).toBe("BIND_FAILED");
    await expect.poll(() => binder.bindsInFlight).toBe(0);
    expect(binder.status()).toMatchObject({ state: "live", retries: 0 });
    expect(binder.status().outage).toBeUndefined();

    // The next bind is allocated.
    clock.now = Date.now();
    release();
    const y = await newArq();
    await start(y);
    await expect.poll(async () => (await state(y)).state).toBe("BOUND");
    expect((await state(x)).state).toBe("BIND_FAILED");

    expect(said(LOST, { follower: "binder" })).toHaveLength(1);
    expect(said(RESTORED, { follower: "binder" })).toHaveLength(1);
    expect(unhandled).toEqual([]);
  });
});

/**
 * The projector over a real redis-server: same read models as the memory store, FLUSHALL healed
 * while running, kill and restart, and notifications over Redis pub/sub.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { BoundNotifier } from "../../projections/arqs/bound-notifier.js";
import { projections } from "../../projections/index.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { RedisPubSub } from "../../src/infra/pubsub/redis.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startRedis, type TestRedis } from "../support/redis.js";
import { append, arqCreated, bindStarted, bound, queriesOf } from "../projections/support.js";
import { CrashingStore, dumpAll, eventually, listen, mixedLog } from "../readstore/support.js";

const names = projections.map((p) => p.name);
let redis: TestRedis;
let client: Redis;
let store: RedisReadStore;
const runners: Projector[] = [];

beforeAll(async () => {
  redis = await startRedis();
  client = redis.client();
  store = new RedisReadStore(client);
});
afterAll(async () => redis?.stop());
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  await client.flushall();
});

function runner(s = store, extra: Partial<ConstructorParameters<typeof Projector>[0]> = {}) {
  const r = new Projector({ events: extra.events!, store: s, projections, batchSize: 25, healthCheckMs: 20, ...extra });
  runners.push(r);
  return r;
}

async function memoryModels(es: MemoryEventStore) {
  const mem = new MemoryReadStore();
  await new Projector({ events: es, store: mem, projections }).rebuild();
  return dumpAll(mem, names);
}

describe("projector on Redis", () => {
  it("builds the same read models as the memory store", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog(4, 8));
    await runner(store, { events: es }).start();
    expect(await dumpAll(store, names)).toEqual(await memoryModels(es));
    const read = queriesOf(store);
    expect((await read.listArqs({ state: "BOUND" }, 100)).items.map((a) => a.uuid)).toEqual(
      [0, 1, 2, 3].flatMap((h) => [`arq-${h}-2`, `arq-${h}-6`]),
    );
    expect((await read.listResourceProviders("host1"))[0]).toMatchObject({ uuid: "rp-p1", used: 1, resourceClass: "PGPU" });
  });

  it("heals FLUSHALL while running, without a restart", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog(3, 4));
    const r = runner(store, { events: es });
    await r.start();
    await client.flushall();
    await eventually(async () => expect(await store.getCheckpoints(names)).not.toContain(undefined));
    await r.caughtUp();
    await append(es, [arqCreated("after")]);
    await r.caughtUp();
    expect(await dumpAll(store, names)).toEqual(await memoryModels(es));
  });

  it("loses and duplicates nothing when killed mid-way and restarted", async () => {
    const es = new MemoryEventStore();
    await append(es, mixedLog(4, 8));
    const crashing = new CrashingStore(store, 12);
    const r1 = new Projector({ events: es, store: crashing, projections, batchSize: 25, healthCheckMs: 20 });
    void r1.start().catch(() => undefined);
    await eventually(() => expect(crashing.crashed).toBe(true));
    await r1.stop();
    await runner(store, { events: es }).start();
    expect(await dumpAll(store, names)).toEqual(await memoryModels(es));
  });

  it("publishes accelerator-request-bound over Redis after the read model shows it", async () => {
    const es = new MemoryEventStore();
    const pubsub = new RedisPubSub(redis.url);
    const listener = await listen(new RedisPubSub(redis.url), store);
    try {
      const r = runner(store, { events: es, hooks: [new BoundNotifier(pubsub, store, console)] });
      await r.start();
      await append(es, [arqCreated("a1"), bindStarted("a1", "h1", "i1"), bound("a1", { instance: "i1" })]);
      await eventually(() => expect(listener.received.map((x) => [x.notification.tag, x.notification.status, x.stateOnReceipt])).toEqual([["a1", "COMPLETED", "BOUND"]]));
    } finally {
      await listener.close();
      await pubsub.close();
    }
  });
});

/**
 * Two deployments share one Redis on purpose, each behind its own key prefix (REDIS_KEY_PREFIX):
 * neither sees the other's read models or notifications.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { listResourceProviders } from "../../projections/resource-providers/queries.js";
import { projections } from "../../projections/index.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { RedisPubSub } from "../../src/infra/pubsub/redis.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startRedis, type TestRedis } from "../support/redis.js";
import { append, gpuHost } from "../projections/support.js";

let redis: TestRedis;
let client: Redis;

beforeAll(async () => {
  redis = await startRedis();
  client = redis.client();
});
afterAll(async () => redis?.stop());

const hostsOf = async (store: RedisReadStore) => [...new Set((await listResourceProviders(store.guarded())).map((rp) => rp.name.split("_")[0]!))].sort();

describe("REDIS_KEY_PREFIX: deployments sharing one Redis", () => {
  it("each projects and answers its own log, and every key it wrote is behind its prefix", async () => {
    const deployments = await Promise.all(
      [["cyborg-a:", "host-a", "1"], ["cyborg-b:", "host-b", "2"]].map(async ([prefix, host, n]) => {
        const events = new MemoryEventStore();
        await append(events, gpuHost(host, n));
        const store = new RedisReadStore(client, { keyPrefix: prefix });
        return { prefix: prefix!, host: host!, events, store, projector: new Projector({ events, store, projections }) };
      }),
    );
    try {
      for (const d of deployments) await d.projector.start();
      for (const d of deployments) expect(await hostsOf(d.store)).toEqual([d.host]);
      const keys = await client.keys("*");
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.filter((k) => !k.startsWith("cyborg-a:{") && !k.startsWith("cyborg-b:{"))).toEqual([]);
      await deployments[0]!.store.drop("resource-providers");
      expect(await hostsOf(deployments[1]!.store)).toEqual(["host-b"]);
    } finally {
      for (const d of deployments) await d.projector.stop();
      await client.flushall();
    }
  });

  it("a key prefix with braces is refused (the projection's hash tag must stay the key's)", () => {
    expect(() => new RedisReadStore(client, { keyPrefix: "{a}:" })).toThrow(RangeError);
  });

  it("notifications stay inside their deployment", async () => {
    const a = new RedisPubSub(redis.url, { channelPrefix: "cyborg-a:" });
    const b = new RedisPubSub(redis.url, { channelPrefix: "cyborg-b:" });
    try {
      const [heardA, heardB] = [a.subscribe<{ n: number }>("topic"), b.subscribe<{ n: number }>("topic")];
      await Promise.all([heardA.ready, heardB.ready]);
      await b.publish("topic", { n: 2 });
      await a.publish("topic", { n: 1 });
      expect((await heardA[Symbol.asyncIterator]().next()).value).toEqual({ n: 1 });
      expect((await heardB[Symbol.asyncIterator]().next()).value).toEqual({ n: 2 });
    } finally {
      await a.close();
      await b.close();
    }
  });
});

/**
 * Pub/sub and the shared rate-limit counters on a real Redis Cluster (three masters, three
 * replicas), as REDIS_CLUSTER=true opens them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimit } from "../../src/api/rate-limit.js";
import { RedisPubSub } from "../../src/infra/pubsub/redis.js";
import { connectRedis } from "../../src/infra/redis-client.js";
import { startTestCluster, type TestRedisCluster } from "../support/redis-cluster.js";

let cluster: TestRedisCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => cluster?.stop());

describe("PubSub on a Redis Cluster", () => {
  it("delivers to subscribers of two processes, whichever nodes their connections are on; prefixes keep deployments apart", async () => {
    const target = { url: cluster.url, cluster: true };
    const [a, b, other] = [new RedisPubSub(target, { channelPrefix: "x:" }), new RedisPubSub({ url: cluster.server.nodes[4]!.url, cluster: true }, { channelPrefix: "x:" }), new RedisPubSub(target, { channelPrefix: "y:" })];
    try {
      const heard = [a.subscribe<{ n: number }>("topic"), b.subscribe<{ n: number }>("topic"), other.subscribe<{ n: number }>("topic")];
      await Promise.all(heard.map((s) => s.ready));
      await other.publish("topic", { n: 0 });
      for (let n = 1; n <= 20; n++) await (n % 2 ? a : b).publish("topic", { n });
      // In the order published: one node carries a channel's messages, whichever process publishes.
      for (const s of heard.slice(0, 2)) {
        const it = s[Symbol.asyncIterator]();
        for (let n = 1; n <= 20; n++) expect((await it.next()).value).toEqual({ n });
      }
      expect((await heard[2]![Symbol.asyncIterator]().next()).value).toEqual({ n: 0 });
    } finally {
      await Promise.all([a.close(), b.close(), other.close()]);
    }
  });
});

describe("The rate limit's counters on a Redis Cluster", () => {
  it("are shared by replicas: a token's requests count on each", async () => {
    const settings = { requests: 5, windowS: 60, exemptRoles: new Set<never>(), redisKeyPrefix: "x:" };
    const open = () => new RateLimit(settings, connectRedis({ url: cluster.url, cluster: true }, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }));
    const [a, b] = [open(), open()];
    await Promise.all([a.connected(), b.connected()]);
    try {
      const principal = { principal: "p1", roles: new Set(["member"]) } as never;
      const other = { principal: "p2", roles: new Set(["member"]) } as never;
      for (let i = 0; i < 5; i++) expect(await (i % 2 ? a : b).take(principal, undefined)).toBeUndefined();
      expect(await a.take(principal, undefined)).toMatchObject({ limit: 5 });
      expect(await b.take(principal, undefined)).toMatchObject({ limit: 5 });
      expect(await b.take(other, undefined)).toBeUndefined();
      // The counters are in the cluster, not in either process.
      const admin = cluster.client();
      await admin.ping();
      const keys = (await Promise.all(admin.nodes("master").map((n) => n.keys("x:cyborg-es:rate*")))).flat();
      expect(keys.length).toBe(2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

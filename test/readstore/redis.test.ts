import { describe, expect, it } from "vitest";
import type { Write } from "../../src/infra/readstore/port.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startRedis } from "../support/redis.js";
import { readStoreContract } from "./contract.js";

readStoreContract("redis", async () => {
  const redis = await startRedis();
  const client = redis.client();
  const store = new RedisReadStore(client);
  return {
    store,
    async reset() {
      await client.flushall();
    },
    async close() {
      await store.close();
      await redis.stop();
    },
  };
});

readStoreContract("redis behind a key prefix", async () => {
  const redis = await startRedis();
  const client = redis.client();
  const store = new RedisReadStore(client, { keyPrefix: "cyborg-x:" });
  return {
    store,
    async reset() {
      expect((await client.keys("*")).filter((k) => !k.startsWith("cyborg-x:{"))).toEqual([]);
      await client.flushall();
    },
    async close() {
      await store.close();
      await redis.stop();
    },
  };
});

describe("Redis adapter: the apply script", () => {
  it("is sent again when Redis forgot it (SCRIPT FLUSH), on the same connection", async () => {
    const redis = await startRedis();
    try {
      const client = redis.client();
      const store = new RedisReadStore(client);
      await store.applyBatch("t", [{ op: "put", key: "{t}:a", fields: { n: 1 } }], 1n, null);
      await client.script("FLUSH");
      await store.applyBatch("t", [{ op: "put", key: "{t}:a", fields: { n: 2 } }], 2n, 1n);
      expect(await store.getDocs(["{t}:a"])).toEqual([{ n: 2 }]);
      expect(await store.getCheckpoint("t")).toBe(2n);
    } finally {
      await redis.stop();
    }
  });
});

describe("Redis adapter: the ops of a batch", () => {
  it("apply a batch of more than 65,536 keys (key indexes beyond 16 bits)", async () => {
    const redis = await startRedis();
    try {
      const store = new RedisReadStore(redis.client());
      const writes: Write[] = [];
      for (let i = 0; i < 70_000; i++) writes.push({ op: "zadd", key: `{t}:z${i}`, member: `m${i}`, score: i });
      await store.applyBatch("t", writes, 1n, null);
      expect(await store.count(["{t}:z0", "{t}:z65535", "{t}:z69999"])).toEqual([1, 1, 1]);
      expect((await store.range(["{t}:z69999"], { limit: 1 })).items).toMatchObject([{ member: "m69999", score: 69_999 }]);
    } finally {
      await redis.stop();
    }
  });
});

describe("Redis adapter: what it remembers of index families", () => {
  it("does not trust its memory once another writer moved the checkpoint", async () => {
    const redis = await startRedis();
    try {
      const client = redis.client();
      const a = new RedisReadStore(client);
      const b = new RedisReadStore(client);
      const ix = (value: string): Write => ({ op: "index", index: "{t}:color", member: "m", value, order: "{t}:all" });
      await a.drop("t");
      await a.applyBatch("t", [{ op: "zadd", key: "{t}:all", member: "m", score: 1 }, ix("red")], 1n, null);
      await b.applyBatch("t", [ix("blue")], 2n, 1n); // another process
      await a.applyBatch("t", [ix("green")], 3n, 2n);
      expect(await a.getMembers(["{t}:color:red", "{t}:color:blue", "{t}:color:green"])).toEqual([[], [], ["m"]]);
      expect((await a.range(["{t}:color:green"], { limit: 1 })).items[0]?.score).toBe(1);
    } finally {
      await redis.stop();
    }
  });
});

describe("Redis adapter: reconnections", () => {
  it("tells its watchers when Redis is reached again (it may be another store), until they stop", async () => {
    const redis = await startRedis();
    try {
      const client = redis.client();
      const store = new RedisReadStore(client);
      await client.ping();
      let calls = 0;
      const reconnected = new Promise<void>((resolve) => {
        const stop = store.watchReconnects(() => {
          calls++;
          stop();
          resolve();
        });
      });
      await redis.restart();
      await reconnected;
      await redis.restart();
      await client.ping();
      expect(calls).toBe(1);
    } finally {
      await redis.stop();
    }
  });
});

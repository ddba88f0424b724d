import { describe, expect, it } from "vitest";
import type { Write } from "../../src/readstore/port.js";
import { RedisReadStore } from "../../src/readstore/redis.js";
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

/**
 * The Redis read store on a real Redis Cluster (three masters, three replicas): the contract
 * suite, and what a cluster asks of the adapter (every batch, script and pipeline on one slot;
 * scans on every master).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startTestCluster, type TestRedisCluster } from "../support/redis-cluster.js";
import { readStoreContract } from "./contract.js";

let cluster: TestRedisCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => cluster?.stop());

readStoreContract("redis cluster", async () => {
  const store = new RedisReadStore(cluster.client());
  return { store, reset: () => cluster.flushall(), close: () => store.close() };
});

readStoreContract("redis cluster behind a key prefix", async () => {
  const store = new RedisReadStore(cluster.client(), { keyPrefix: "cyborg-x:" });
  return { store, reset: () => cluster.flushall(), close: () => store.close() };
});

describe("Redis Cluster: reads and checkpoints across projections (slots on every master)", () => {
  // Twenty projections: their hash tags fall on all three masters.
  const names = Array.from({ length: 20 }, (_, i) => `p${i}`);

  it("reads checkpoints, stamps and serving marks of projections on different masters in one call", async () => {
    await cluster.flushall();
    const store = new RedisReadStore(cluster.client());
    for (const [i, n] of names.entries()) await store.applyBatch(n, [{ op: "put", key: `{${n}}:doc`, fields: { i } }], BigInt(i + 1), null, { log: "L", event: `e${i}` });
    for (const n of names) expect(await store.markServing(n, BigInt(names.indexOf(n) + 1))).toBe(true);
    expect(await store.getCheckpoints(names)).toEqual(names.map((_, i) => BigInt(i + 1)));
    expect((await store.getStamps(names)).map((s) => s?.origin?.event)).toEqual(names.map((_, i) => `e${i}`));
    expect(await store.serving([...names, "none"])).toEqual([...names.map(() => true), false]);
    const docs = await store.guarded().getDocs(names.map((n) => `{${n}}:doc`));
    expect(docs).toEqual(names.map((_, i) => ({ i })));
    await store.close();
  });

  it("drops and dumps a projection whichever master holds it, and nothing of the others", async () => {
    await cluster.flushall();
    const store = new RedisReadStore(cluster.client(), { keyPrefix: "x:" });
    for (const [i, n] of names.entries()) await store.applyBatch(n, [{ op: "put", key: `{${n}}:a`, fields: { i } }, { op: "zadd", key: `{${n}}:z`, member: "m", score: i }], 1n, null);
    for (const n of names) expect(Object.keys((await store.dump(n)).keys)).toEqual([`{${n}}:a`, `{${n}}:z`]);
    for (const n of names.slice(0, 10)) await store.drop(n);
    expect(await store.getCheckpoints(names)).toEqual(names.map((_, i) => (i < 10 ? undefined : 1n)));
    expect((await store.dump("p15")).keys).toEqual({ "{p15}:a": { hash: { i: 15 } }, "{p15}:z": { zset: [["m", 15]] } });
    expect((await store.dump("p5")).keys).toEqual({});
    await store.close();
  });
});

describe("Redis Cluster: the apply script", () => {
  it("goes to the master of its projection's slot, and is sent again there when that master forgot it", async () => {
    await cluster.flushall();
    const client = cluster.client();
    const store = new RedisReadStore(client);
    await store.applyBatch("t", [{ op: "put", key: "{t}:a", fields: { n: 1 } }], 1n, null);
    await Promise.all(client.nodes("master").map((n) => n.script("FLUSH")));
    await store.applyBatch("t", [{ op: "put", key: "{t}:a", fields: { n: 2 } }], 2n, 1n);
    expect(await store.getDocs(["{t}:a"])).toEqual([{ n: 2 }]);
    await expect(store.applyBatch("t", [], 3n, 1n)).rejects.toThrow(/projection t is at 2/);
    await store.close();
  });
});

// Last in this file: it kills a master of the shared cluster.
describe("Redis Cluster: a failover that loses the last batches", () => {
  it("tells the watchers, and the checkpoint read is the promoted replica's (behind: the projector sees the writes lost)", async () => {
    await cluster.flushall();
    const client = cluster.client();
    const store = new RedisReadStore(client);
    const key = "{lost}:doc";
    await store.applyBatch("lost", [{ op: "put", key, fields: { n: 1 } }], 1n, null);
    const master = await cluster.server.masterOf(key);
    const replica = await cluster.server.replicaOf(master);
    // The replica holds batch 1: WAIT on a connection to the master that wrote after it.
    const direct = new Redis(master.url);
    await direct.set("{lost}:sync", "1");
    expect(await direct.wait(1, 10_000)).toBe(1);
    // The replica stops reading; the master drops it once 1 MB waits for it, and goes on acknowledging.
    await direct.config("SET", "client-output-buffer-limit", "replica 1mb 1mb 0");
    direct.disconnect();
    process.kill(replica.pid, "SIGSTOP");
    const big = "x".repeat(1 << 20);
    let cp = 1n;
    try {
      for (let i = 0; i < 20; i++) await store.applyBatch("lost", [{ op: "put", key, fields: { n: Number(cp + 1n), big } }], cp + 1n, cp++);
    } finally {
      process.kill(replica.pid, "SIGCONT");
    }
    expect(await store.getCheckpoint("lost")).toBe(21n);
    const told = new Promise<void>((resolve) => {
      const stop = store.watchReconnects(() => (stop(), resolve()));
    });
    await cluster.server.kill(master);
    await cluster.server.healthy(key);
    await told;
    const after = await store.getCheckpoint("lost");
    expect(after).toBeDefined();
    expect(after!).toBeLessThan(21n);
    await expect(store.applyBatch("lost", [], 22n, 21n)).rejects.toThrow(/projection lost is at/);
    await store.close();
  }, 120_000);
});

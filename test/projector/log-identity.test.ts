/**
 * A read store that outlives the process (Redis, LMDB) meets another log: a fresh one, or one
 * restored from an older copy. Its models are not served (UNAVAILABLE, not ready) and are rebuilt
 * from this log; no query ever answers the other log's data.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listResourceProviders } from "../../projections/resource-providers/queries.js";
import { projections } from "../../projections/index.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import type { ProjectorHooks } from "../../src/reactors/projector/projection.js";
import { LmdbReadStore } from "../../src/infra/readstore/lmdb.js";
import { ReadStoreUnavailableError, type ReadStore } from "../../src/infra/readstore/port.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startRedis, type TestRedis } from "../support/redis.js";
import { append, gpuHost, profileCreated } from "../projections/support.js";

const names = projections.map((p) => p.name);
type Answer = string[] | "UNAVAILABLE";

interface Harness {
  store: ReadStore;
  reset(): Promise<void>;
  close(): Promise<void>;
  /** Stamps every model with another log, as a store swapped under the projector would be (Redis only). */
  swap?(log: string): Promise<void>;
}

async function redisHarness(): Promise<Harness> {
  const redis: TestRedis = await startRedis();
  const client = redis.client();
  const swap = async (log: string) => void (await Promise.all(names.map((n) => client.hset(`{${n}}:@meta`, "log", log, "event", `${log}-event`))));
  return { store: new RedisReadStore(client), reset: async () => void (await client.flushall()), close: () => redis.stop(), swap };
}

async function lmdbHarness(): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), "log-identity-"));
  const store = await LmdbReadStore.open(dir);
  return { store, reset: () => store.flushAll(), close: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
}

/** The hosts the resource providers' read model answers for, as the API reads it. */
async function hosts(store: ReadStore): Promise<Answer> {
  try {
    return [...new Set((await listResourceProviders(store.guarded())).map((rp) => rp.name.split("_")[0]!))].sort();
  } catch (err) {
    if (err instanceof ReadStoreUnavailableError) return "UNAVAILABLE";
    throw err;
  }
}

/** A copy of the log's first `count` events (same ids, same positions): a backup restored. */
async function restored(log: MemoryEventStore, count: number): Promise<MemoryEventStore> {
  const copy = new MemoryEventStore();
  for (const e of (await log.readAll()).slice(0, count)) await copy.append(e.stream, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }], "any");
  return copy;
}

const padding = (n: number) => Array.from({ length: n }, (_, i) => profileCreated(`pad-${i}`, `dp-pad-${i}`));

describe.each([
  ["redis", redisHarness],
  ["lmdb", lmdbHarness],
])("a %s read store built from another log", (kind, make) => {
  let h: Harness;
  const running: Projector[] = [];

  beforeAll(async () => {
    h = await make();
  });
  afterAll(async () => h?.close());
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
    await h.reset();
  });

  async function fill(log: MemoryEventStore): Promise<void> {
    const r = new Projector({ events: log, store: h.store, projections, batchSize: 5 });
    await r.start();
    await r.stop();
  }

  /** Starts a projector on `log`, asking the API's question once it loaded its checkpoints, after each batch, and once started. */
  async function startAsking(log: MemoryEventStore): Promise<Answer[]> {
    const asked: Array<Promise<Answer>> = [];
    const ask = () => void asked.push(hosts(h.store));
    const hook: ProjectorHooks = { started: ask, afterCommit: async () => ask() };
    const r = new Projector({ events: log, store: h.store, projections, hooks: [hook], batchSize: 5, healthCheckMs: 20 });
    running.push(r);
    await r.start();
    ask();
    return Promise.all(asked);
  }

  const expectOnly = (answers: Answer[], right: string[]) => {
    expect(answers[0]).toBe("UNAVAILABLE");
    expect(answers.at(-1)).toEqual(right);
    for (const a of answers) expect(["UNAVAILABLE", right]).toContainEqual(a);
  };

  it("a fresh log with other events: nothing of the first log is served, then this log's hosts", async () => {
    const first = new MemoryEventStore();
    await append(first, [...gpuHost("host-a", "1"), ...gpuHost("host-c", "3")]);
    await fill(first);
    const second = new MemoryEventStore();
    await append(second, [...gpuHost("host-b", "2"), ...padding(10)]);
    expectOnly(await startAsking(second), ["host-b"]);
    expect(await h.store.serving(names)).toEqual(names.map(() => true));
  });

  it("a log restored from an older copy (the store's checkpoint is past its head): rebuilt, then right", async () => {
    const log = new MemoryEventStore();
    await append(log, [...gpuHost("host-a", "1"), ...gpuHost("host-c", "3")]);
    await fill(log);
    expectOnly(await startAsking(await restored(log, 6)), ["host-a"]);
  });

  it("a log restored from an older copy and written since (another event at the store's checkpoint): rebuilt, then right", async () => {
    const log = new MemoryEventStore();
    await append(log, [...gpuHost("host-a", "1"), ...gpuHost("host-c", "3")]);
    await fill(log);
    const copy = await restored(log, 6);
    await append(copy, gpuHost("host-d", "4"));
    expect(await copy.headPosition()).toBe(await log.headPosition());
    expectOnly(await startAsking(copy), ["host-a", "host-d"]);
  });

  it.runIf(kind === "redis")("a store that became another log's while running is noticed, not served, and rebuilt", async () => {
    const mine = new MemoryEventStore();
    await append(mine, [...gpuHost("host-a", "1"), ...padding(3)]);
    const warnings: string[] = [];
    let rebuilt!: () => void;
    const done = new Promise<void>((resolve) => (rebuilt = resolve));
    const log = { info: (_: object, msg: string) => msg === "rebuild done" && rebuilt(), warn: (_: object, msg: string) => void warnings.push(msg), error() {} };
    const r = new Projector({ events: mine, store: h.store, projections, batchSize: 5, healthCheckMs: 20, log });
    running.push(r);
    await r.start();
    await h.swap!("their-log");
    await done;
    await r.caughtUp();
    expect(warnings.filter((w) => /not this log's \(it was built from the log whose first event is their-log.*rebuilding it from this log/.test(w))).toHaveLength(names.length);
    expect(await hosts(h.store)).toEqual(["host-a"]);
    expect(await h.store.serving(names)).toEqual(names.map(() => true));
  });

  it("the same log started again keeps its models (no rebuild)", async () => {
    const log = new MemoryEventStore();
    await append(log, gpuHost("host-a", "1"));
    await fill(log);
    const answers = await startAsking(log);
    expect(answers).toEqual([["host-a"], ["host-a"]]);
  });
});

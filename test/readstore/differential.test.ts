/**
 * The Redis adapter combines writes per key and resolves index families in JS (redis-batch.ts);
 * the memory adapter applies writes one by one. Random batches must leave both stores equal,
 * whether the Redis adapter's cache is warm, cold (another writer) or reset by a drop.
 * The LMDB adapter keeps the same model in its own layout (lmdb-layout.ts): the same batches must
 * leave it equal to memory too.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { LmdbReadStore } from "../../src/infra/readstore/lmdb.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import type { Write } from "../../src/infra/readstore/port.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startRedis, type TestRedis } from "../support/redis.js";

const P = "d";
const key = (s: string) => `{d}:${s}`;
const members = fc.constantFrom("a", "b", "c", "d");
// Not the family hash: families are written only through index writes (the port's contract).
const docKeys = fc.constantFrom(key("doc1"), key("doc2"));
const zsetKeys = fc.constantFrom(key("z1"), key("z2"), key("order"), key("fam:red"));
const fields = fc.constantFrom("f", "g", "h", "a");

const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ op: fc.constant("put" as const), key: docKeys, fields: fc.dictionary(fields, fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.constant(null)), { maxKeys: 3 }) }),
  fc.record({ op: fc.constant("unset" as const), key: docKeys, fields: fc.array(fields, { maxLength: 2 }) }),
  fc.record({ op: fc.constant("del" as const), key: fc.oneof(docKeys, zsetKeys) }),
  fc.record({ op: fc.constant("zadd" as const), key: zsetKeys, member: members, score: fc.integer({ min: 0, max: 5 }), nx: fc.boolean() }),
  fc.record({ op: fc.constant("zrem" as const), key: zsetKeys, member: members }),
  fc.record({
    op: fc.constant("index" as const),
    index: fc.constant(key("fam")),
    member: members,
    value: fc.oneof(fc.constant(null), fc.constantFrom("red", "blue")),
    order: fc.constant(key("order")),
  }),
);

/** Puts and zadds to one key kind only, so no batch is a WRONGTYPE error. */
function sameKinds(batches: Write[][]): boolean {
  const kinds = new Map<string, string>();
  const ok = (k: string, kind: string) => (kinds.get(k) ?? kind) === kind && (kinds.set(k, kind), true);
  return batches.flat().every((w) => {
    if (w.op === "put" || w.op === "unset") return ok(w.key, "hash");
    if (w.op === "zadd" || w.op === "zrem") return ok(w.key, "zset");
    if (w.op === "index") return ok(w.index, "hash") && ok(w.order, "zset") && ok(`${w.index}:red`, "zset") && ok(`${w.index}:blue`, "zset");
    return true;
  });
}

let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  redis = await startRedis();
  client = redis.client();
});
afterAll(async () => redis?.stop());

describe("Redis batches equal memory batches", () => {
  it("for random batches, with warm, cold and dropped caches", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(write, { maxLength: 12 }), { minLength: 1, maxLength: 5 }), fc.array(fc.constantFrom("warm", "cold", "drop", "pipelined"), { minLength: 5, maxLength: 5 }), async (batches, modes) => {
        fc.pre(sameKinds(batches));
        await client.flushall();
        const mem = new MemoryReadStore();
        let red = new RedisReadStore(client);
        let cp = 0n;
        let expected: bigint | null = null;
        let inFlight: Promise<void> = Promise.resolve();
        for (const [i, batch] of batches.entries()) {
          if (modes[i] !== "pipelined") await inFlight;
          if (modes[i] === "cold") red = new RedisReadStore(client); // another process: knows nothing
          if (modes[i] === "drop") {
            await Promise.all([mem.drop(P), red.drop(P)]);
            expected = null;
          }
          cp += 1n;
          await mem.applyBatch(P, batch, cp, expected);
          // Pipelined: the next batch is sent before this one is acknowledged (as a rebuild does).
          const sent = red.applyBatch(P, batch, cp, expected);
          inFlight = Promise.all([inFlight, sent]).then(() => undefined);
          expected = cp;
        }
        await inFlight;
        expect(await red.dump(P)).toEqual(await mem.dump(P));
      }),
      { numRuns: 300 },
    );
  });
});

describe("LMDB batches equal memory batches", () => {
  let dir: string;
  let lmdb: LmdbReadStore;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "lmdb-differential-"));
    lmdb = await LmdbReadStore.open(dir);
  });
  afterAll(async () => {
    await lmdb?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("for random batches, with drops and batches sharing a commit", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(write, { maxLength: 12 }), { minLength: 1, maxLength: 5 }), fc.array(fc.constantFrom("awaited", "drop", "pipelined"), { minLength: 5, maxLength: 5 }), async (batches, modes) => {
        fc.pre(sameKinds(batches));
        await lmdb.flushAll();
        const mem = new MemoryReadStore();
        let cp = 0n;
        let expected: bigint | null = null;
        let inFlight: Promise<void> = Promise.resolve();
        for (const [i, batch] of batches.entries()) {
          if (modes[i] !== "pipelined") await inFlight;
          if (modes[i] === "drop") {
            await Promise.all([mem.drop(P), lmdb.drop(P)]);
            expected = null;
          }
          cp += 1n;
          await mem.applyBatch(P, batch, cp, expected);
          inFlight = Promise.all([inFlight, lmdb.applyBatch(P, batch, cp, expected)]).then(() => undefined);
          expected = cp;
        }
        await inFlight;
        expect(await lmdb.dump(P)).toEqual(await mem.dump(P));
        const zsets = ["z1", "z2", "order", "fam:red", "fam:blue"].map(key);
        expect(await lmdb.count(zsets)).toEqual(await mem.count(zsets)); // sizes are kept apart from the entries
        expect(await lmdb.getDocs([key("doc1"), key("doc2"), key("fam")])).toEqual(await mem.getDocs([key("doc1"), key("doc2"), key("fam")]));
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * The memory store keeps a small hash as one JSON text and a larger one field by field, a small
 * sorted set as its text and a larger one as a SortedSet (memory.ts, hash-text.ts). Batches that
 * grow keys past those sizes and shrink them back must leave it equal to the LMDB store (another
 * layout altogether), and a capture of it, put back into a new store, must read the same.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LmdbReadStore } from "../../src/infra/readstore/lmdb.js";
import { FIELD_MAP_FROM } from "../../src/infra/readstore/hash-text.js";
import { MemoryReadStore, type CapturedModel } from "../../src/infra/readstore/memory.js";
import type { Write } from "../../src/infra/readstore/port.js";

const P = "c";
const key = (s: string) => `{c}:${s}`;
const many = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
// More fields than a text hash holds, more members than a text set holds; "__proto__" is a name like any other.
const fieldNames = fc.constantFrom(...many("f", FIELD_MAP_FROM + 20), "__proto__");
const memberNames = fc.constantFrom(...many("m", 50), "__proto__");
const value = fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }));

const write: fc.Arbitrary<Write> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("put" as const), key: fc.constant(key("doc")), fields: fc.dictionary(fieldNames, value, { maxKeys: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("unset" as const), key: fc.constant(key("doc")), fields: fc.array(fieldNames, { maxLength: 40 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("zadd" as const), key: fc.constant(key("set")), member: memberNames, score: fc.integer({ min: -3, max: 30 }), nx: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("zrem" as const), key: fc.constant(key("set")), member: memberNames }) },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant("index" as const), index: fc.constant(key("fam")), member: memberNames, value: fc.oneof(fc.constant(null), fc.constantFrom("red", "blue")), order: fc.constant(key("set")) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("del" as const), key: fc.constantFrom(key("doc"), key("set")) }) },
);

/** What the store answers for every key the batches touch. */
async function answers(store: MemoryReadStore | LmdbReadStore) {
  const sets = ["set", "fam:red", "fam:blue"].map(key);
  const firstPage = await store.range([key("set")], { limit: 7 });
  const secondPage = firstPage.hasMore ? await store.range([key("set")], { limit: 40, after: firstPage.items.at(-1)!.cursor }) : null;
  return {
    dump: await store.dump(P),
    docs: await store.getDocs([key("doc"), key("fam")]),
    counts: await store.count(sets),
    members: await store.getMembers(sets),
    pages: [firstPage, secondPage],
    upTo: await store.range([key("set")], { limit: 100, until: 10 }),
  };
}

/** The model as a capture reads it, put back into a new store (what a snapshot's load does). */
async function restored(store: MemoryReadStore): Promise<MemoryReadStore> {
  const capture = store.openCapture(P)!;
  const model: CapturedModel = { checkpoint: capture.checkpoint, origin: capture.origin, hashes: [], zsets: [] };
  for (const [kind, k, content] of capture.lines()) {
    if (kind === "h") model.hashes.push([k, content as string]);
    else model.zsets.push([k, content as string]);
  }
  const copy = new MemoryReadStore();
  copy.restore(P, model);
  return copy;
}

describe("the memory store's compact keys", () => {
  let dir: string;
  let lmdb: LmdbReadStore;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "memory-compact-"));
    lmdb = await LmdbReadStore.open(dir);
  });
  afterAll(async () => {
    await lmdb?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("grown past their small sizes and shrunk back, read as the LMDB store reads them, and so does their capture", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(write, { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 8 }), async (batches) => {
        await lmdb.flushAll();
        const mem = new MemoryReadStore();
        let cp = 0n;
        for (const batch of batches) {
          cp += 1n;
          await mem.applyBatch(P, batch, cp, cp === 1n ? null : cp - 1n);
          await lmdb.applyBatch(P, batch, cp, cp === 1n ? null : cp - 1n);
        }
        const expected = await answers(lmdb);
        expect(await answers(mem)).toEqual(expected);
        expect(await answers(await restored(mem))).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it("a doc read cannot change what is stored: its values are the caller's own, or frozen", async () => {
    const store = new MemoryReadStore();
    const fields = Object.fromEntries(many("f", FIELD_MAP_FROM + 1).map((f, i) => [f, { n: i }]));
    await store.applyBatch(P, [{ op: "put", key: key("small"), fields: { a: { n: 1 } } }, { op: "put", key: key("big"), fields }], 1n);
    for (const doc of await store.getDocs([key("small"), key("big")])) {
      Object.assign(doc!, { added: true });
      try {
        ((doc!.a ?? doc!.f0) as { n: number }).n = 99;
      } catch (err) {
        expect(err).toBeInstanceOf(TypeError); // frozen
      }
    }
    const [small, big] = await store.getDocs([key("small"), key("big")]);
    expect(small).toEqual({ a: { n: 1 } });
    expect(big).toEqual(fields);
  });
});

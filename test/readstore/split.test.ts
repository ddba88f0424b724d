/**
 * The split read store (src/infra/readstore/split.ts) passes the contract whether the contract's
 * projection is the one kept apart or one left in the main store, and a read naming keys of both
 * stores gets each answer from the right one, in the order of its keys.
 */
import { describe, expect, it } from "vitest";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { ReadStoreUnavailableError } from "../../src/infra/readstore/port.js";
import { SplitReadStore } from "../../src/infra/readstore/split.js";
import { readStoreContract } from "./contract.js";

function harness(apartName: string) {
  const main = new MemoryReadStore();
  const apart = new MemoryReadStore();
  const store = new SplitReadStore(main, new Map([[apartName, apart]]));
  return {
    main,
    apart,
    store,
    async reset() {
      main.flushAll();
      apart.flushAll();
    },
    async close() {
      await store.close();
    },
  };
}

readStoreContract("split, the projection kept apart", async () => harness("t"));
readStoreContract("split, the projection in the main store", async () => harness("audit"));

describe("split read store: keys of both stores", () => {
  it("writes each projection to its own store and answers mixed reads in key order", async () => {
    const { main, apart, store } = harness("audit");
    await store.applyBatch("audit", [{ op: "zadd", key: "{audit}:object:x", member: "1 0 s", score: 1 }, { op: "put", key: "{audit}:doc", fields: { a: 1 } }], 1n, null);
    await store.applyBatch("arqs", [{ op: "zadd", key: "{arqs}:all", member: "u1", score: 2 }, { op: "put", key: "{arqs}:arq:u1", fields: { state: "Initial" } }], 2n, null);
    expect(await apart.getMembers(["{audit}:object:x"])).toEqual([["1 0 s"]]);
    expect(await main.getMembers(["{audit}:object:x", "{arqs}:all"])).toEqual([[], ["u1"]]);
    expect(await store.getDocs(["{arqs}:arq:u1", "{audit}:doc", "{arqs}:none", "{audit}:none"])).toEqual([{ state: "Initial" }, { a: 1 }, null, null]);
    expect(await store.getMembers(["{audit}:object:x", "{arqs}:all"])).toEqual([["1 0 s"], ["u1"]]);
    expect(await store.count(["{arqs}:all", "{audit}:object:x", "{audit}:object:y"])).toEqual([1, 1, 0]);
    expect(await store.getCheckpoints(["arqs", "audit", "deployables"])).toEqual([2n, 1n, undefined]);
    await expect(store.range(["{audit}:object:x", "{arqs}:all"], { limit: 10 })).rejects.toThrow(/different stores/);
  });

  it("a guarded view refuses a projection not marked serving in its own store, and drop empties only that store", async () => {
    const { apart, store } = harness("audit");
    await store.applyBatch("audit", [{ op: "zadd", key: "{audit}:request:c", member: "m", score: 1 }], 1n, null);
    await store.applyBatch("arqs", [{ op: "zadd", key: "{arqs}:all", member: "u1", score: 1 }], 1n, null);
    expect(await store.markServing("arqs", 1n)).toBe(true);
    const guarded = store.guarded();
    expect(await guarded.count(["{arqs}:all"])).toEqual([1]);
    await expect(guarded.count(["{arqs}:all", "{audit}:request:c"])).rejects.toBeInstanceOf(ReadStoreUnavailableError);
    expect(await store.markServing("audit", 1n)).toBe(true);
    expect(await apart.serving(["audit"])).toEqual([true]);
    expect(await guarded.count(["{arqs}:all", "{audit}:request:c"])).toEqual([1, 1]);
    await store.drop("audit");
    expect(await apart.getCheckpoint("audit")).toBeUndefined();
    expect(await store.getCheckpoint("arqs")).toBe(1n);
    await store.applyBatch("audit", [{ op: "zadd", key: "{audit}:request:c", member: "m", score: 1 }], 1n, null);
    await (guarded as SplitReadStore).flushAll();
    expect(await store.getCheckpoints(["arqs", "audit"])).toEqual([undefined, undefined]);
  });
});

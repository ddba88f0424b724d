import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { open } from "lmdb";
import { encodeKey, openDatabases } from "../../src/infra/readstore/lmdb-layout.js";
import { readCount } from "../../src/infra/readstore/lmdb-sorted-sets.js";
import { LmdbReadStore } from "../../src/infra/readstore/lmdb.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { CheckpointMismatchError, type Write } from "../../src/infra/readstore/port.js";
import { readStoreContract } from "./contract.js";

const tempDir = () => mkdtemp(join(tmpdir(), "lmdb-readstore-"));

/** The contract's harness over a store opened in `dir` (removed at close). */
const harness = (store: LmdbReadStore, dir: string) => ({
  store,
  reset: () => store.flushAll(),
  async close() {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  },
});

readStoreContract("lmdb", async () => {
  const dir = await tempDir();
  return harness(await LmdbReadStore.open(dir), dir);
});

// Writes on the store's own thread run the compiled thread script: checked when the build is there
// and newer than the sources (CI builds first), with the compiled store and its port's classes.
const built = (f: string) => new URL(`../../dist/src/infra/readstore/${f}.js`, import.meta.url);
const fresh = (() => {
  try {
    const sources = ["lmdb", "lmdb-writer", "lmdb-writes", "lmdb-write-thread", "lmdb-layout", "lmdb-sorted-sets", "port"].map((f) => statSync(new URL(`../../src/infra/readstore/${f}.ts`, import.meta.url)).mtimeMs);
    return statSync(built("lmdb-write-thread")).mtimeMs >= Math.max(...sources);
  } catch {
    return false;
  }
})();
type Compiled = { lmdb: typeof import("../../src/infra/readstore/lmdb.js"); port: typeof import("../../src/infra/readstore/port.js") };
const compiled = async (): Promise<Compiled> => ({ lmdb: await import(built("lmdb").href), port: await import(built("port").href) });

if (fresh) {
  const { lmdb, port } = await compiled();
  readStoreContract(
    "lmdb, writes on the store's thread",
    async () => {
      const dir = await tempDir();
      const store = await lmdb.LmdbReadStore.open(dir, { writeThread: true });
      if (!store.writesOnThread) throw new Error("the compiled store did not start its write thread");
      return harness(store, dir);
    },
    port,
  );
}

describe.runIf(fresh)("LMDB read store, writes on the store's thread", () => {
  it("keeps what the thread wrote across close and reopen, and reads it at once after each write", async () => {
    const { lmdb } = await compiled();
    const dir = await tempDir();
    try {
      const store = await lmdb.LmdbReadStore.open(dir, { writeThread: true });
      for (let i = 1; i <= 50; i++) {
        await store.applyBatch("t", [{ op: "zadd", key: "{t}:z", member: `m${i}`, score: i }, { op: "put", key: "{t}:d", fields: { n: i } }], BigInt(i));
        // Read on this thread right after the write resolved: no turn of the event loop in between.
        expect([await store.count(["{t}:z"]), await store.getDocs(["{t}:d"])]).toEqual([[i], [{ n: i }]]);
      }
      await store.close();
      await expect(store.applyBatch("t", [], 51n)).rejects.toThrow(/closed/);
      const again = await LmdbReadStore.open(dir);
      expect(await again.getCheckpoint("t")).toBe(50n);
      expect((await again.range(["{t}:z"], { limit: 3 })).items.map((e) => e.member)).toEqual(["m1", "m2", "m3"]);
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a key too long for LMDB with a RangeError and writes nothing of its batch", async () => {
    const { lmdb } = await compiled();
    const dir = await tempDir();
    const store = await lmdb.LmdbReadStore.open(dir, { writeThread: true });
    try {
      const long = `{t}:${"k".repeat(3000)}`;
      await expect(store.applyBatch("t", [{ op: "put", key: "{t}:a", fields: { v: 1 } }, { op: "put", key: long, fields: { v: 1 } }], 1n)).rejects.toBeInstanceOf(RangeError);
      expect(await store.getDocs(["{t}:a"])).toEqual([null]);
      expect(await store.getCheckpoint("t")).toBeUndefined();
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("LMDB read store adapter", () => {
  const dirs: string[] = [];
  const opened: LmdbReadStore[] = [];
  const openStore = async (dir?: string) => {
    if (!dir) dirs.push((dir = await tempDir()));
    const store = await LmdbReadStore.open(dir);
    opened.push(store);
    return { store, dir };
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  it("keeps data, checkpoints and serving marks across close and reopen", async () => {
    const { store, dir } = await openStore();
    await store.applyBatch(
      "t",
      [
        { op: "put", key: "{t}:a", fields: { v: 1 } },
        { op: "zadd", key: "{t}:z", member: "m", score: 2 },
        { op: "index", index: "{t}:ix", member: "m", value: "red", order: "{t}:z" },
      ],
      7n,
      null,
    );
    await store.applyBatch("u", [{ op: "put", key: "{u}:a", fields: { v: 2 } }], 3n, null);
    expect(await store.markServing("t", 7n)).toBe(true);
    const before = await store.dump("t");
    await store.close();
    opened.pop();

    const { store: again } = await openStore(dir);
    expect(await again.dump("t")).toEqual(before);
    expect(await again.getCheckpoints(["t", "u"])).toEqual([7n, 3n]);
    expect(await again.serving(["t", "u"])).toEqual([true, false]);
    expect(await again.guarded().count(["{t}:ix:red"])).toEqual([1]);
    await again.applyBatch("t", [{ op: "index", index: "{t}:ix", member: "m", value: "blue", order: "{t}:z" }], 8n, 7n);
    expect(await again.getMembers(["{t}:ix:red", "{t}:ix:blue"])).toEqual([[], ["m"]]);
  });

  it("marks its directory while open; a mark from another boot of the machine empties it, one from this boot (a process that died) does not", async () => {
    const { store, dir } = await openStore();
    const mark = join(dir, "unsynced.json");
    await store.applyBatch("t", [{ op: "zadd", key: "{t}:z", member: "m", score: 1 }], 1n);
    expect(existsSync(mark)).toBe(true);
    await store.close();
    opened.pop();
    expect(existsSync(mark)).toBe(false); // a clean close, its commits synced

    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    writeFileSync(mark, JSON.stringify({ bootId: boot })); // as a process that died leaves it
    let { store: again } = await openStore(dir);
    expect(await again.getCheckpoint("t")).toBe(1n);
    await again.close();
    opened.pop();

    writeFileSync(mark, JSON.stringify({ bootId: "a boot before the machine restarted" }));
    ({ store: again } = await openStore(dir));
    expect(await again.getCheckpoint("t")).toBeUndefined();
    expect(await again.getMembers(["{t}:z"])).toEqual([[]]);
    await again.applyBatch("t", [{ op: "zadd", key: "{t}:z", member: "n", score: 2 }], 1n, null);
    expect(await again.getMembers(["{t}:z"])).toEqual([["n"]]);
  });

  it("keeps the entries of keys that share a prefix apart", async () => {
    const { store } = await openStore();
    const long = "x".repeat(70); // ordered-binary writes strings of 64+ characters raw
    const keys = ["{t}:a", "{t}:a b", "{t}:a\u0000", "{t}:a\u0000b", "{t}:ab", `{t}:${long}`, `{t}:${long}\u0000b`];
    const writes: Write[] = keys.flatMap((key, i): Write[] => [
      { op: "zadd", key, member: `m${i}`, score: i },
      { op: "zadd", key, member: "\u0000b", score: -i },
      { op: "put", key: `${key}#doc`, fields: { [`f${i}`]: i, "\u0000": i } },
    ]);
    await store.applyBatch("t", writes, 1n);
    expect(await store.getMembers(keys)).toEqual(keys.map((_, i) => ["\u0000b", `m${i}`]));
    expect(await store.count(keys)).toEqual(keys.map(() => 2));
    expect(await store.getDocs(keys.map((k) => `${k}#doc`))).toEqual(keys.map((_, i) => ({ [`f${i}`]: i, "\u0000": i })));
    for (const [i, key] of keys.entries()) {
      const page = await store.range([key], { limit: 10, until: i });
      expect(page.items.map((e) => [e.member, e.score])).toEqual([["\u0000b", i === 0 ? 0 : -i], [`m${i}`, i]]);
      expect(page.total).toBe(2);
    }
    await store.applyBatch("t", [{ op: "del", key: "{t}:a" }, { op: "del", key: `{t}:${long}` }], 2n);
    expect(await store.count(keys)).toEqual([0, 2, 2, 2, 2, 0, 2]);
    const dumped = Object.keys((await store.dump("t")).keys);
    expect(dumped).toEqual([...keys.filter((_, i) => i !== 0 && i !== 5), ...keys.map((k) => `${k}#doc`)].sort());
    // A projection whose name starts another's: drop keeps the other.
    await store.applyBatch("t2", [{ op: "zadd", key: "{t2}:a", member: "m", score: 1 }], 1n);
    await store.drop("t");
    expect(await store.count(["{t2}:a", "{t}:ab"])).toEqual([1, 0]);
  });

  it("refuses a key too long for LMDB before writing anything", async () => {
    const { store } = await openStore();
    await store.applyBatch("t", [{ op: "put", key: "{t}:a", fields: { v: 1 } }], 1n);
    const batches: Write[][] = [
      [{ op: "put", key: "{t}:a", fields: { v: 2 } }, { op: "zadd", key: `{t}:${"k".repeat(1901)}`, member: "m", score: 1 }],
      [{ op: "put", key: "{t}:a", fields: { v: 2 } }, { op: "put", key: `{t}:${"k".repeat(3000)}`, fields: { v: 1 } }],
      [{ op: "put", key: "{t}:a", fields: { v: 2 } }, { op: "index", index: "{t}:ix", member: "m", value: "v".repeat(1900), order: "{t}:z" }],
    ];
    for (const writes of batches) await expect(store.applyBatch("t", writes, 2n)).rejects.toThrow(/^read store key "\{t\}:[kix]+.*" is too long for LMDB: \d+ bytes, at most 1904$/);
    expect(await store.getCheckpoint("t")).toBe(1n);
    expect((await store.dump("t")).keys).toEqual({ "{t}:a": { hash: { v: 1 } } });
    // The longest key that fits, and reads of longer ones (nothing can be there).
    const longest = `{t}:${"k".repeat(1900)}`;
    await store.applyBatch("t", [{ op: "zadd", key: longest, member: "m".repeat(5000), score: 1 }], 2n);
    const tooLong = `{t}:${"k".repeat(1901)}`;
    expect(await store.count([longest, tooLong])).toEqual([1, 0]);
    expect(await store.getMembers([longest, tooLong])).toEqual([["m".repeat(5000)], []]);
    expect(await store.getDocs([tooLong])).toEqual([null]);
    expect(await store.range([tooLong], { limit: 1 })).toEqual({ items: [], total: 0, hasMore: false });
  });

  it("keeps members and field names longer than an LMDB key, in byte order", async () => {
    const { store } = await openStore();
    const x = (c: string, n: number) => c.repeat(n);
    // Score 1, in byte order; past ~1960 bytes a member is cut in its LMDB keys.
    const tied = ["a", x("a", 1960), x("a", 3000), "a" + x("é", 2000), "b", x("b", 70_000), "c"];
    // Cut members of one score whose first ~1950 bytes are equal sort by hash: either order.
    const twins = [x("a", 2999) + "b", x("a", 2999) + "c"];
    const writes: Write[] = [...tied].reverse().map((member): Write => ({ op: "zadd", key: "{t}:z", member, score: 1 }));
    writes.push(...twins.map((member): Write => ({ op: "zadd", key: "{t}:z", member, score: 3 })));
    writes.push({ op: "zadd", key: "{t}:z", member: x("z", 4000), score: 0 }, { op: "zadd", key: "{t}:z", member: x("y", 4000), score: 2 });
    writes.push(...[x("a", 3000), "b", x("y", 4000)].map((member): Write => ({ op: "zadd", key: "{t}:other", member, score: 9 })));
    writes.push({ op: "put", key: "{t}:doc", fields: { [x("f", 3000)]: 1, [x("f", 2999) + "g"]: 2, short: 3 } });
    await store.applyBatch("t", writes, 1n);
    const all = [x("z", 4000), ...tied, x("y", 4000)];
    const [members] = await store.getMembers(["{t}:z"]);
    expect(members!.slice(0, -2)).toEqual(all);
    expect(members!.slice(-2).sort()).toEqual(twins);
    expect(await store.count(["{t}:z"])).toEqual([all.length + 2]);
    const pages: string[] = [];
    for (let after: string | undefined, page; (page = await store.range(["{t}:z"], { after, limit: 3 })); after = page.items.at(-1)!.cursor) {
      pages.push(...page.items.map((i) => i.member));
      if (!page.hasMore) break;
    }
    expect(pages).toEqual(members);
    expect((await store.range(["{t}:z"], { limit: 20, until: 1 })).total).toBe(all.length - 1);
    const both = await store.range(["{t}:z", "{t}:other"], { limit: 5 });
    expect(both.items.map((i) => [i.member, i.score])).toEqual([[x("a", 3000), 1], ["b", 1], [x("y", 4000), 2]]);
    expect((await store.getDocs(["{t}:doc"]))[0]).toEqual({ [x("f", 3000)]: 1, [x("f", 2999) + "g"]: 2, short: 3 });

    // Moves, removals and index families with long members.
    const ix = (member: string, value: string | null): Write => ({ op: "index", index: "{t}:ix", member, value, order: "{t}:z" });
    await store.applyBatch("t", [{ op: "zadd", key: "{t}:z", member: x("a", 3000), score: 5 }, { op: "zrem", key: "{t}:z", member: x("b", 70_000) }, { op: "zrem", key: "{t}:z", member: twins[1]! }, { op: "unset", key: "{t}:doc", fields: [x("f", 3000)] }, ix(x("a", 3000), "red")], 2n);
    await store.applyBatch("t", [ix(x("a", 3000), "blue"), ix(twins[0]!, "blue")], 3n);
    const dump = await store.dump("t");
    expect(dump.keys["{t}:ix:blue"]).toEqual({ zset: [[twins[0], 3], [x("a", 3000), 5]] });
    expect(dump.keys["{t}:ix"]).toEqual({ hash: { [x("a", 3000)]: "blue", [twins[0]!]: "blue" } });
    expect(dump.keys["{t}:ix:red"]).toBeUndefined();
    expect(dump.keys["{t}:doc"]).toEqual({ hash: { [x("f", 2999) + "g"]: 2, short: 3 } });
    const left = all.filter((m) => m !== x("a", 3000) && m !== x("b", 70_000));
    expect((dump.keys["{t}:z"] as { zset: Array<[string, number]> }).zset.map(([m]) => m)).toEqual([...left, twins[0], x("a", 3000)]);
    await store.applyBatch("t", [ix(x("a", 3000), null), ix(twins[0]!, null), { op: "del", key: "{t}:z" }], 4n);
    expect(Object.keys((await store.dump("t")).keys)).toEqual(["{t}:doc", "{t}:other"]);
  });

  it("reads a key's count where a store written before kept it, and moves it beside the members when it changes", async () => {
    const { store, dir } = await openStore();
    const zadd = (key: string, member: string, score: number): Write => ({ op: "zadd", key, member, score });
    await store.applyBatch("t", [zadd("{t}:z", "a", 1), zadd("{t}:z", "b", 2), zadd("{t}:z", "c", 3), zadd("{t}:y", "a", 1), zadd("{t}:y", "b", 2), zadd("{t}:x", "a", 1)], 1n, null);
    const before = await store.dump("t");
    await store.close();
    opened.pop();
    // The layout before: each count in `sizes`, none in `order`.
    const keys = ["{t}:z", "{t}:y", "{t}:x"].map(encodeKey);
    const env = open({ path: dir, maxDbs: 8 });
    const db = openDatabases(env);
    await env.transaction(() => {
      for (const k of keys) {
        db.sizes.putSync(k, readCount(db, k));
        db.order.removeSync(k);
      }
    });
    await env.close();

    const { store: again } = await openStore(dir);
    expect(await again.count(["{t}:z", "{t}:y", "{t}:x"])).toEqual([3, 2, 1]);
    expect(await again.dump("t")).toEqual(before);
    expect((await again.range(["{t}:z"], { limit: 2 })).total).toBe(3);
    await again.applyBatch("t", [zadd("{t}:z", "d", 4), { op: "zrem", key: "{t}:y", member: "a" }, { op: "del", key: "{t}:x" }], 2n, 1n);
    expect(await again.count(["{t}:z", "{t}:y", "{t}:x"])).toEqual([4, 1, 0]);
    expect(await again.getMembers(["{t}:z", "{t}:y"])).toEqual([["a", "b", "c", "d"], ["b"]]);
    await again.close();
    opened.pop();
    const after = open({ path: dir, maxDbs: 8 });
    const moved = openDatabases(after);
    expect(keys.map((k) => [moved.sizes.get(k), moved.order.get(k) === undefined ? undefined : readCount(moved, k)])).toEqual([
      [undefined, 4],
      [undefined, 1],
      [undefined, undefined],
    ]);
    await after.close();
  });

  it("counts a range cut at a score (until) from either end, as memory does", async () => {
    const { store } = await openStore();
    const mem = new MemoryReadStore();
    const scores = [-3, -1.5, 0, 0, 0, 2, 2, 5, 7, 7, 7, 8, 20];
    const writes = scores.map((score, i): Write => ({ op: "zadd", key: "{t}:z", member: `m${i % 4}-${i}`, score }));
    await Promise.all([store.applyBatch("t", writes, 1n), mem.applyBatch("t", writes, 1n)]);
    for (const until of [-4, -3, -2, 0, 1, 2, 6, 7, 7.5, 19, 20, 21]) {
      const [page, expected] = await Promise.all([store.range(["{t}:z"], { limit: 2, until }), mem.range(["{t}:z"], { limit: 2, until })]);
      expect(page, `until ${until}`).toEqual(expected);
    }
  });

  it("writes nothing of a batch whose checkpoint guard fails, also while another batch is applied beside it", async () => {
    const { store } = await openStore();
    await store.applyBatch("t", [{ op: "zadd", key: "{t}:z", member: "a", score: 1 }], 1n, null);
    const [bad, good] = await Promise.allSettled([
      store.applyBatch("t", [{ op: "zadd", key: "{t}:z", member: "b", score: 2 }, { op: "put", key: "{t}:d", fields: { v: 1 } }], 5n, 4n),
      store.applyBatch("u", [{ op: "put", key: "{u}:d", fields: { v: 1 } }], 1n, null),
    ]);
    expect(bad.status === "rejected" && bad.reason).toBeInstanceOf(CheckpointMismatchError);
    expect(good.status).toBe("fulfilled");
    expect(await store.getMembers(["{t}:z"])).toEqual([["a"]]);
    expect(await store.getDocs(["{t}:d", "{u}:d"])).toEqual([null, { v: 1 }]);
    expect(await store.getCheckpoints(["t", "u"])).toEqual([1n, 1n]);
  });
});

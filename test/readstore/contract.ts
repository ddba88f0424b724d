/**
 * The ReadStore contract: every adapter runs this suite (memory.test.ts, redis.test.ts).
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import * as port from "../../src/infra/readstore/port.js";
import type { ReadStore, Write } from "../../src/infra/readstore/port.js";

export interface ContractHarness {
  store: ReadStore;
  /** Empties the whole store between tests. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

const P = "t";
const k = (s: string) => `{t}:${s}`;

/** The port's error classes the adapter throws: another copy of them for an adapter loaded from the compiled build. */
export type PortErrors = Pick<typeof port, "CheckpointMismatchError" | "ReadStoreUnavailableError">;

export function readStoreContract(adapter: string, make: () => Promise<ContractHarness>, errors: PortErrors = port): void {
  const { CheckpointMismatchError, ReadStoreUnavailableError } = errors;
  describe(`ReadStore contract: ${adapter}`, () => {
    let h: ContractHarness;
    let store: ReadStore;
    let cp = 0n;
    /** Applies a batch with the next checkpoint. */
    const apply = async (...writes: Write[]) => {
      cp += 1n;
      await store.applyBatch(P, writes, cp);
    };

    beforeEach(async () => {
      h ??= await make();
      store = h.store;
      await h.reset();
      cp = 0n;
    });
    afterAll(async () => h?.close());

    describe("docs", () => {
      it("puts fields as JSON, merges later puts, and reads many docs in one call", async () => {
        await apply(
          { op: "put", key: k("a"), fields: { n: 1, s: "x", nested: { z: 1, a: [1, { b: null }] }, nil: null, skipped: undefined } },
          { op: "put", key: k("a"), fields: { s: "y", t: true } },
          { op: "put", key: k("b"), fields: { n: 2 } },
        );
        const [a, missing, b] = await store.getDocs([k("a"), k("missing"), k("b")]);
        expect(a).toEqual({ n: 1, s: "y", nested: { z: 1, a: [1, { b: null }] }, nil: null, t: true });
        expect(Object.keys((a as { nested: object }).nested)).toEqual(["z", "a"]); // key order survives
        expect(a).not.toHaveProperty("skipped");
        expect(missing).toBeNull();
        expect(b).toEqual({ n: 2 });
        expect(await store.getDocs([])).toEqual([]);
      });

      it("unsets fields; a doc without fields is gone; del removes any key", async () => {
        await apply({ op: "put", key: k("a"), fields: { x: 1, y: 2 } }, { op: "put", key: k("b"), fields: { x: 1 } });
        await apply({ op: "unset", key: k("a"), fields: ["x"] }, { op: "unset", key: k("b"), fields: ["x"] }, { op: "unset", key: k("c"), fields: ["x"] });
        expect(await store.getDocs([k("a"), k("b")])).toEqual([{ y: 2 }, null]);
        await apply({ op: "del", key: k("a") }, { op: "zadd", key: k("z"), member: "m", score: 1 });
        await apply({ op: "del", key: k("z") });
        expect(await store.getDocs([k("a")])).toEqual([null]);
        expect(await store.count([k("z")])).toEqual([0]);
      });

      it("keeps non-ASCII and long strings exact, in keys, fields, values and members", async () => {
        const long = "é€😀x".repeat(30_000); // beyond 65,535 bytes of UTF-8
        const short = "ünï😀";
        const mid = "ü".repeat(200); // 200 characters, 400 bytes
        await apply(
          { op: "put", key: k(`doc-${short}`), fields: { [short]: short, long, mid, plain: "a" } },
          { op: "zadd", key: k("z"), member: short, score: -2.5 },
          { op: "zadd", key: k("z"), member: mid, score: 1 },
          { op: "zadd", key: k("z"), member: long, score: 2 },
        );
        const [doc] = await store.getDocs([k(`doc-${short}`)]);
        expect(doc).toEqual({ [short]: short, long, mid, plain: "a" });
        const page = await store.range([k("z")], { limit: 5 });
        expect(page.items.map((i) => [i.member, i.score])).toEqual([
          [short, -2.5],
          [mid, 1],
          [long, 2],
        ]);
      });

      it("a read doc cannot change what is stored: a copy, or frozen", async () => {
        await apply({ op: "put", key: k("a"), fields: { list: [1], nested: { deep: [{ x: 1 }] } } });
        const [a] = await store.getDocs([k("a")]);
        const attempts = [() => (a!.list as number[]).push(2), () => ((a!.nested as { deep: Array<{ x: number }> }).deep[0]!.x = 2)];
        for (const attempt of attempts) {
          try {
            attempt();
          } catch (err) {
            expect(err).toBeInstanceOf(TypeError);
          }
        }
        expect((await store.getDocs([k("a")]))[0]).toEqual({ list: [1], nested: { deep: [{ x: 1 }] } });
      });
    });

    describe("ordered indexes", () => {
      it("orders by score, then member; zadd moves, nx keeps, zrem removes", async () => {
        await apply(
          { op: "zadd", key: k("z"), member: "c", score: 2 },
          { op: "zadd", key: k("z"), member: "b", score: 2 },
          { op: "zadd", key: k("z"), member: "a", score: 3 },
          { op: "zadd", key: k("z"), member: "d", score: 1 },
          { op: "zadd", key: k("z"), member: "d", score: 5, nx: true },
          { op: "zadd", key: k("z"), member: "a", score: 0 },
          { op: "zadd", key: k("y"), member: "q", score: 1 },
        );
        expect(await store.getMembers([k("z"), k("y"), k("none")])).toEqual([["a", "d", "b", "c"], ["q"], []]);
        await apply({ op: "zrem", key: k("z"), member: "d" }, { op: "zrem", key: k("z"), member: "nope" }, { op: "zrem", key: k("none"), member: "x" });
        expect(await store.count([k("z"), k("y"), k("none")])).toEqual([3, 1, 0]);
      });

      it("counts members through adds, removals and a del of the key in one batch", async () => {
        await apply({ op: "zadd", key: k("z"), member: "a", score: 1 }, { op: "zadd", key: k("z"), member: "b", score: 2 });
        await apply(
          { op: "zadd", key: k("z"), member: "c", score: 3 },
          { op: "zrem", key: k("z"), member: "a" },
          { op: "del", key: k("z") },
          { op: "zadd", key: k("z"), member: "d", score: 4 },
          { op: "zadd", key: k("z"), member: "e", score: 5 },
          { op: "zadd", key: k("z"), member: "e", score: 6 },
          { op: "zadd", key: k("y"), member: "q", score: 1 },
          { op: "zrem", key: k("y"), member: "q" },
        );
        expect(await store.count([k("z"), k("y")])).toEqual([2, 0]);
        expect((await store.range([k("z")], { limit: 10 })).total).toBe(2);
        expect(await store.getMembers([k("z"), k("y")])).toEqual([["d", "e"], []]);
        await apply({ op: "zrem", key: k("z"), member: "d" }, { op: "zrem", key: k("z"), member: "e" });
        expect(await store.count([k("z")])).toEqual([0]);
        expect((await store.range([k("z")], { limit: 10 })).total).toBe(0);
      });

      it("pages with cursors, across ties, and after a cursor whose member is gone", async () => {
        const writes: Write[] = [];
        for (let i = 0; i < 10; i++) writes.push({ op: "zadd", key: k("z"), member: `m${i}`, score: i < 4 ? 7 : i });
        await apply(...writes);
        // order: m0 m1 m2 m3 (score 7, by member) then m4(4)? no: scores 4,5,6 come before 7
        const all = (await store.range([k("z")], { limit: 100 })).items.map((i) => i.member);
        expect(all).toEqual(["m4", "m5", "m6", "m0", "m1", "m2", "m3", "m7", "m8", "m9"]);
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.range([k("z")], { after, limit: 3 });
          expect(page.total).toBe(10);
          seen.push(...page.items.map((i) => i.member));
          if (!page.hasMore) break;
          after = page.items.at(-1)!.cursor;
        }
        expect(seen).toEqual(all);

        const first = await store.range([k("z")], { limit: 4 });
        expect(first.items.map((i) => [i.member, i.score])).toEqual([["m4", 4], ["m5", 5], ["m6", 6], ["m0", 7]]);
        await apply({ op: "zrem", key: k("z"), member: "m0" });
        const next = await store.range([k("z")], { after: first.items[3]!.cursor, limit: 2 });
        expect(next.items.map((i) => i.member)).toEqual(["m1", "m2"]);
        expect(next.total).toBe(9);
        expect(next.hasMore).toBe(true);

        const none = await store.range([k("z")], { limit: 0 });
        expect(none).toEqual({ items: [], total: 9, hasMore: true });
        expect(await store.range([k("missing")], { limit: 5 })).toEqual({ items: [], total: 0, hasMore: false });
      });

      it("intersects indexes, in the order and with the scores of the first", async () => {
        await apply(
          ...["a", "b", "c", "d", "e"].map((m, i): Write => ({ op: "zadd", key: k("all"), member: m, score: 10 + i })),
          ...["e", "b", "d", "x"].map((m): Write => ({ op: "zadd", key: k("red"), member: m, score: 0 })),
          ...["d", "b", "e", "a"].map((m): Write => ({ op: "zadd", key: k("big"), member: m, score: 99 })),
        );
        const p1 = await store.range([k("all"), k("red"), k("big")], { limit: 2 });
        expect(p1.items.map((i) => [i.member, i.score])).toEqual([["b", 11], ["d", 13]]);
        expect(p1.total).toBe(3);
        expect(p1.hasMore).toBe(true);
        const p2 = await store.range([k("all"), k("red"), k("big")], { after: p1.items[1]!.cursor, limit: 2 });
        expect(p2.items.map((i) => i.member)).toEqual(["e"]);
        expect(p2.hasMore).toBe(false);
        expect(await store.range([k("all"), k("missing")], { limit: 2 })).toEqual({ items: [], total: 0, hasMore: false });
      });

      it("cuts a range at a score (until): items, total and hasMore count only members scored at most it", async () => {
        const writes: Write[] = [];
        for (let i = 0; i < 10; i++) writes.push({ op: "zadd", key: k("z"), member: `m${i}`, score: i < 3 ? 5 : i + 1 });
        writes.push(...["m1", "m4", "m9"].map((m): Write => ({ op: "zadd", key: k("red"), member: m, score: 0 })));
        await apply(...writes);
        // In order: m3 (4), m0 m1 m2 m4 (5, ties by member), m5 (6), m6 (7) ... m9 (10).
        const members = async (options: { after?: string; limit: number; until?: number }) => {
          const page = await store.range([k("z")], options);
          return [page.items.map((i) => i.member), page.total, page.hasMore];
        };
        expect(await members({ limit: 100, until: 6 })).toEqual([["m3", "m0", "m1", "m2", "m4", "m5"], 6, false]);
        expect(await members({ limit: 2, until: 6 })).toEqual([["m3", "m0"], 6, true]);
        expect(await members({ limit: 4, until: 5 })).toEqual([["m3", "m0", "m1", "m2"], 5, true]);
        expect(await members({ limit: 5, until: 5 })).toEqual([["m3", "m0", "m1", "m2", "m4"], 5, false]);
        expect(await members({ limit: 0, until: 5 })).toEqual([[], 5, true]);
        expect(await members({ limit: 0, until: 3 })).toEqual([[], 0, false]);
        const first = await store.range([k("z")], { limit: 2, until: 6 });
        // After a cursor among ties, and a cursor past the cut.
        expect(await members({ after: first.items[1]!.cursor, limit: 2, until: 6 })).toEqual([["m1", "m2"], 6, true]);
        expect(await members({ after: first.items[1]!.cursor, limit: 5, until: 5 })).toEqual([["m1", "m2", "m4"], 5, false]);
        const late = (await store.range([k("z")], { limit: 100 })).items.at(-1)!.cursor;
        expect(await members({ after: late, limit: 5, until: 6 })).toEqual([[], 6, false]);
        expect(await members({ after: first.items[1]!.cursor, limit: 5, until: 4 })).toEqual([[], 1, false]);
        // Intersections are cut by the first key's scores.
        const red = await store.range([k("z"), k("red")], { limit: 5, until: 6 });
        expect([red.items.map((i) => i.member), red.total, red.hasMore]).toEqual([["m1", "m4"], 2, false]);
        const red1 = await store.range([k("z"), k("red")], { limit: 1, until: 6 });
        expect([red1.items.map((i) => i.member), red1.total, red1.hasMore]).toEqual([["m1"], 2, true]);
        expect(await store.range([k("missing")], { limit: 5, until: 9 })).toEqual({ items: [], total: 0, hasMore: false });
      });

      it("keeps scores above 2^32 and fractional scores exact", async () => {
        await apply({ op: "zadd", key: k("z"), member: "big", score: 2 ** 52 + 1 }, { op: "zadd", key: k("z"), member: "f", score: 0.1 });
        const page = await store.range([k("z")], { limit: 5 });
        expect(page.items.map((i) => i.score)).toEqual([0.1, 2 ** 52 + 1]);
        const after = await store.range([k("z")], { after: page.items[0]!.cursor, limit: 5 });
        expect(after.items.map((i) => i.member)).toEqual(["big"]);
      });
    });

    describe("index families", () => {
      const ix = (member: string, value: string | null): Write => ({ op: "index", index: k("by-color"), member, value, order: k("all") });

      it("files members under their value with their order score, and moves them", async () => {
        await apply(
          { op: "zadd", key: k("all"), member: "a", score: 1 },
          { op: "zadd", key: k("all"), member: "b", score: 2 },
          { op: "zadd", key: k("all"), member: "c", score: 3 },
          ix("c", "red"),
          ix("a", "red"),
          ix("b", "blue"),
        );
        expect(await store.getMembers([k("by-color:red"), k("by-color:blue")])).toEqual([["a", "c"], ["b"]]);
        expect((await store.getDocs([k("by-color")]))[0]).toEqual({ a: "red", b: "blue", c: "red" });
        expect((await store.range([k("by-color:red")], { limit: 5 })).items.map((i) => i.score)).toEqual([1, 3]);

        await apply(ix("a", "blue"), ix("b", "blue"), ix("c", null));
        expect(await store.getMembers([k("by-color:red"), k("by-color:blue")])).toEqual([[], ["a", "b"]]);
        expect((await store.getDocs([k("by-color")]))[0]).toEqual({ a: "blue", b: "blue" });

        await apply(ix("a", null), ix("b", null), ix("zz", null));
        expect(await store.getDocs([k("by-color")])).toEqual([null]);
        expect(await store.count([k("by-color:blue")])).toEqual([0]);
      });

      it("follows a member through several moves inside one batch", async () => {
        await apply({ op: "zadd", key: k("all"), member: "a", score: 1 }, ix("a", "red"));
        await apply(ix("a", "blue"), ix("a", "green"), ix("a", "red"), ix("a", "blue"), { op: "zadd", key: k("all"), member: "n", score: 9 }, ix("n", "blue"), ix("n", null), ix("n", "red"));
        expect(await store.getMembers([k("by-color:red"), k("by-color:blue"), k("by-color:green")])).toEqual([["n"], ["a"], []]);
      });

      it("uses score 0 for a member that is not in the order index", async () => {
        await apply(ix("ghost", "red"));
        expect((await store.range([k("by-color:red")], { limit: 5 })).items.map((i) => [i.member, i.score])).toEqual([["ghost", 0]]);
      });
    });

    describe("checkpoints", () => {
      it("stores the checkpoint with the writes; none before the first batch", async () => {
        expect(await store.getCheckpoint(P)).toBeUndefined();
        await store.applyBatch(P, [], 5n, null);
        expect(await store.getCheckpoint(P)).toBe(5n);
        expect(await store.getCheckpoints([P, "other"])).toEqual([5n, undefined]);
      });

      it("keeps 20-digit positions exact", async () => {
        const big = 18446744073709551610n;
        await store.applyBatch(P, [], big - 1n);
        await store.applyBatch(P, [], big);
        expect(await store.getCheckpoint(P)).toBe(big);
        await expect(store.applyBatch(P, [], big - 1n)).rejects.toBeInstanceOf(CheckpointMismatchError);
      });

      it("refuses a checkpoint at or below the stored one, and applies nothing", async () => {
        await store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 1 } }], 10n);
        await expect(store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 2 } }], 10n)).rejects.toBeInstanceOf(CheckpointMismatchError);
        await expect(store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 3 } }], 9n)).rejects.toBeInstanceOf(CheckpointMismatchError);
        expect(await store.getDocs([k("a")])).toEqual([{ v: 1 }]);
      });

      it("applies writes that stay at the stored checkpoint only when guarded by it", async () => {
        await store.applyBatch(P, [{ op: "zadd", key: k("z"), member: "m1", score: 1 }, { op: "zadd", key: k("z"), member: "m2", score: 2 }], 10n);
        await expect(store.applyBatch(P, [{ op: "zrem", key: k("z"), member: "m1" }], 10n)).rejects.toBeInstanceOf(CheckpointMismatchError);
        await expect(store.applyBatch(P, [{ op: "zrem", key: k("z"), member: "m1" }], 10n, 9n)).rejects.toBeInstanceOf(CheckpointMismatchError);
        expect(await store.getMembers([k("z")])).toEqual([["m1", "m2"]]);
        await store.applyBatch(P, [{ op: "zrem", key: k("z"), member: "m1" }], 10n, 10n);
        expect(await store.getMembers([k("z")])).toEqual([["m2"]]);
        expect(await store.getCheckpoint(P)).toBe(10n);
      });

      it("guards on the expected checkpoint", async () => {
        await store.applyBatch(P, [], 3n, null);
        await expect(store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 1 } }], 4n, null)).rejects.toMatchObject({
          name: "CheckpointMismatchError",
          actual: 3n,
        });
        await expect(store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 1 } }], 4n, 2n)).rejects.toBeInstanceOf(CheckpointMismatchError);
        await store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 1 } }], 4n, 3n);
        expect(await store.getCheckpoint(P)).toBe(4n);
        await store.drop(P);
        await expect(store.applyBatch(P, [], 5n, 4n)).rejects.toMatchObject({ actual: undefined });
      });

      it("rejects a batch that writes outside the projection, and applies none of it", async () => {
        const bad: Write[][] = [
          [{ op: "put", key: k("a"), fields: { v: 1 } }, { op: "put", key: "{other}:a", fields: { v: 1 } }],
          [{ op: "put", key: k("a"), fields: { v: 1 } }, { op: "put", key: "{t}:@meta", fields: { checkpoint: "9" } }],
          [{ op: "zadd", key: k("z"), member: "m", score: Number.NaN }],
          [{ op: "put", key: k("a"), fields: { f: () => 1 } }],
        ];
        for (const writes of bad) await expect(store.applyBatch(P, writes, 1n)).rejects.toThrow();
        expect(await store.getDocs([k("a")])).toEqual([null]);
        expect(await store.getCheckpoint(P)).toBeUndefined();
      });

      it("applies big batches (tens of thousands of writes) in one step", async () => {
        const writes: Write[] = [];
        for (let i = 0; i < 20_000; i++) {
          writes.push({ op: "put", key: k(`d${i}`), fields: { i } }, { op: "zadd", key: k("all"), member: `d${i}`, score: i });
          writes.push({ op: "index", index: k("mod"), member: `d${i}`, value: String(i % 3), order: k("all") });
        }
        await store.applyBatch(P, writes, 1n);
        expect(await store.count([k("all"), k("mod:0"), k("mod:1"), k("mod:2")])).toEqual([20_000, 6667, 6667, 6666]);
        expect((await store.getDocs([k("d19999")]))[0]).toEqual({ i: 19_999 });
      });
    });

    describe("origins: which log a model was built from", () => {
      const a1 = { log: "log-a", event: "a-1" };
      const a2 = { log: "log-a", event: "a-2" };

      it("keeps the origin with the checkpoint, through serving marks; drop forgets both", async () => {
        expect(await store.getStamps([P])).toEqual([undefined]);
        await store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 1 } }], 1n, null, a1);
        await store.applyBatch(P, [], 2n, 1n, a2);
        await store.markServing(P, 2n);
        await store.unmarkServing(P);
        await store.markServing(P, 2n);
        expect(await store.getStamps([P, "other"])).toEqual([{ checkpoint: 2n, origin: a2 }, undefined]);
        await store.drop(P);
        expect(await store.getStamps([P])).toEqual([undefined]);
      });

      it("a batch without an origin leaves none (it would name another event)", async () => {
        await store.applyBatch(P, [], 1n, null, a1);
        await store.applyBatch(P, [], 2n, 1n);
        expect(await store.getStamps([P])).toEqual([{ checkpoint: 2n }]);
      });

      it("a model stamped with another log refuses the batch, and applies nothing", async () => {
        await store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 1 } }], 1n, null, a1);
        const other = { log: "log-b", event: "b-2" };
        await expect(store.applyBatch(P, [{ op: "put", key: k("a"), fields: { v: 2 } }], 2n, 1n, other)).rejects.toMatchObject({ name: "CheckpointMismatchError", actual: 1n });
        expect(await store.getDocs([k("a")])).toEqual([{ v: 1 }]);
        expect(await store.getStamps([P])).toEqual([{ checkpoint: 1n, origin: a1 }]);
      });

      it("watching reconnections gives a way to stop", () => {
        const stop = store.watchReconnects(() => undefined);
        expect(typeof stop).toBe("function");
        stop();
      });
    });

    describe("serving marks", () => {
      const unavailable = async (read: Promise<unknown>, projections: string[]) => {
        const err = await read.then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(ReadStoreUnavailableError);
        expect((err as InstanceType<typeof ReadStoreUnavailableError>).projections).toEqual(projections);
      };

      it("guarded reads of a projection not marked serving are refused, every kind of read", async () => {
        await apply({ op: "put", key: k("a"), fields: { v: 1 } }, { op: "zadd", key: k("z"), member: "m", score: 1 }, { op: "zadd", key: k("y"), member: "m", score: 1 });
        const g = store.guarded();
        await unavailable(g.getDocs([k("a")]), [P]);
        await unavailable(g.getMembers([k("z")]), [P]);
        await unavailable(g.count([k("z")]), [P]);
        await unavailable(g.range([k("z")], { limit: 10 }), [P]);
        await unavailable(g.range([k("z"), k("y")], { limit: 10 }), [P]);
        // The store itself (the projector's) answers whatever it holds.
        expect(await store.getDocs([k("a")])).toEqual([{ v: 1 }]);
        expect(await g.serving([P])).toEqual([false]);
        expect(await store.markServing(P, cp)).toBe(true);
        expect(await g.serving([P])).toEqual([true]);
        expect(await g.getDocs([k("a")])).toEqual([{ v: 1 }]);
        expect(await g.getMembers([k("z")])).toEqual([["m"]]);
        expect(await g.count([k("z")])).toEqual([1]);
        expect((await g.range([k("z"), k("y")], { limit: 10 })).items.map((i) => i.member)).toEqual(["m"]);
        // The view shares the data: a later write shows through it.
        await apply({ op: "put", key: k("a"), fields: { v: 2 } });
        expect(await g.getDocs([k("a")])).toEqual([{ v: 2 }]);
      });

      it("marks only at the checkpoint the store holds: a model lost or moved since is not marked", async () => {
        expect(await store.markServing(P, null)).toBe(true); // nothing applied yet: an empty log
        await store.unmarkServing(P);
        await apply({ op: "put", key: k("a"), fields: { v: 1 } });
        expect(await store.markServing(P, null)).toBe(false);
        expect(await store.markServing(P, cp + 1n)).toBe(false);
        expect(await store.serving([P])).toEqual([false]);
        expect(await store.markServing(P, cp)).toBe(true);
        // A later batch keeps the mark; drop takes it away with the data.
        await apply({ op: "put", key: k("a"), fields: { v: 2 } });
        expect(await store.serving([P])).toEqual([true]);
        await store.drop(P);
        expect(await store.serving([P])).toEqual([false]);
        await unavailable(store.guarded().getDocs([k("a")]), [P]);
      });

      it("a read over two projections names the one not serving", async () => {
        await apply({ op: "put", key: k("a"), fields: { v: 1 } });
        await store.applyBatch("u", [{ op: "put", key: "{u}:a", fields: { v: 2 } }], 1n);
        expect(await store.markServing("u", 1n)).toBe(true);
        const g = store.guarded();
        await unavailable(g.getDocs(["{u}:a", k("a"), "{u}:b"]), [P]);
        expect(await g.getDocs(["{u}:a", "{u}:b"])).toEqual([{ v: 2 }, null]);
        expect(await g.getDocs([])).toEqual([]);
      });

      it("losing everything (a flush) loses the marks", async () => {
        await apply({ op: "put", key: k("a"), fields: { v: 1 } });
        await store.markServing(P, cp);
        await h.reset();
        expect(await store.serving([P])).toEqual([false]);
      });
    });

    describe("drop and dump", () => {
      it("drop deletes every key of the projection and its checkpoint, and nothing else", async () => {
        await apply({ op: "put", key: k("a"), fields: { v: 1 } }, { op: "zadd", key: k("z"), member: "m", score: 1 });
        await store.applyBatch("u", [{ op: "put", key: "{u}:a", fields: { v: 2 } }], 1n);
        await store.drop(P);
        expect(await store.getCheckpoint(P)).toBeUndefined();
        expect(await store.getDocs([k("a"), "{u}:a"])).toEqual([null, { v: 2 }]);
        expect(await store.count([k("z")])).toEqual([0]);
        expect((await store.dump(P)).keys).toEqual({});
        expect(await store.getCheckpoint("u")).toBe(1n);
      });

      it("dumps a projection canonically", async () => {
        await store.applyBatch(
          P,
          [
            { op: "put", key: k("b"), fields: { z: 1, a: { y: 1, x: 2 } } },
            { op: "zadd", key: k("all"), member: "q", score: 2 },
            { op: "zadd", key: k("all"), member: "p", score: 1 },
            { op: "index", index: k("ix"), member: "q", value: "v", order: k("all") },
          ],
          42n,
        );
        const dump = await store.dump(P);
        expect(dump).toEqual({
          checkpoint: "42",
          keys: {
            "{t}:all": { zset: [["p", 1], ["q", 2]] },
            "{t}:b": { hash: { a: { y: 1, x: 2 }, z: 1 } },
            "{t}:ix": { hash: { q: "v" } },
            "{t}:ix:v": { zset: [["q", 2]] },
          },
        });
        expect(Object.keys(dump.keys)).toEqual(["{t}:all", "{t}:b", "{t}:ix", "{t}:ix:v"]);
        expect(Object.keys((dump.keys["{t}:b"] as { hash: object }).hash)).toEqual(["a", "z"]);
      });
    });
  });
}

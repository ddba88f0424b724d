import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { verifyLog } from "../../src/audit/verify.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import type { EventStore, NewEvent } from "../../src/infra/eventstore/port.js";
import { eventStoreContract } from "./contract.js";

async function tempStore(pageSize?: number) {
  const dir = await mkdtemp(join(tmpdir(), "cyborg-es-lmdb-"));
  // A small catch-up page makes the contract's subscriptions cross many page boundaries; a small
  // checkpoint interval makes its global chain keep many checkpoints.
  const open = () => LmdbEventStore.open(dir, { catchUpPageSize: pageSize, checkpointInterval: 4 });
  let store: EventStore = await open();
  return {
    dir,
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = await open();
      return store;
    },
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

eventStoreContract("lmdb", () => tempStore(7), { strictEventIds: true, startsEmpty: true, durable: true, checkpointInterval: 4 });

describe("LmdbEventStore specifics", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  const meta = { principal: "t", correlationId: "c", causationId: "c", at: "2026-11-22T00:00:00Z" };
  const ev = (i: number): NewEvent => ({ id: `id-${i}`, type: "T", data: { i }, metadata: meta });

  it("keeps its data in the given directory, across several reopen cycles", async () => {
    const t = await tempStore();
    cleanups.push(() => t.cleanup());
    for (let round = 0; round < 3; round++) {
      await t.store.append("s", [ev(2 * round), ev(2 * round + 1)], round === 0 ? "no_stream" : 2 * round - 1);
      await t.reopen();
    }
    expect((await t.store.readStream("s")).map((e) => [e.revision, e.position])).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => [i, BigInt(i + 1)]),
    );
    expect((await readdir(t.dir)).sort()).toEqual(["data.mdb", "lock.mdb"]);
  });

  it("two stores writing to one directory never reuse a position (the last position is re-read after another writer's commit)", async () => {
    const t = await tempStore();
    cleanups.push(() => t.cleanup());
    const other = await LmdbEventStore.open(t.dir);
    cleanups.push(() => other.close());
    let n = 0;
    for (let round = 0; round < 4; round++) {
      await t.store.append(`a${round}`, [ev(n++), ev(n++)], "no_stream");
      await t.store.append(`b${round}`, [ev(n++)], "no_stream");
      await other.append(`c${round}`, [ev(n++)], "no_stream");
    }
    const log = await t.store.readAll();
    expect(log.map((e) => e.position)).toEqual(Array.from({ length: n }, (_, i) => BigInt(i + 1)));
    expect(log.map((e) => e.data)).toEqual(Array.from({ length: n }, (_, i) => ({ i })));
    // Each writer read the global chain's open segment back after the other's commit.
    expect(await verifyLog(t.store)).toMatchObject({ ok: true, events: n, hashed: n });
  });

  it("refuses names LMDB cannot store as keys, before writing anything", async () => {
    const t = await tempStore();
    cleanups.push(() => t.cleanup());
    await expect(t.store.append("", [ev(1)], "any")).rejects.toThrow(/stream name/);
    await expect(t.store.append("x".repeat(2000), [ev(1)], "any")).rejects.toThrow(/stream name/);
    await expect(t.store.append("s", [{ ...ev(1), id: "" }], "any")).rejects.toThrow(/event id/);
    expect(await t.store.headPosition()).toBeUndefined();
  });

  it("rejects appends and subscriptions after close, and close ends live subscriptions", async () => {
    const t = await tempStore();
    const dir = t.dir;
    const sub = t.store.subscribeToAll();
    const loop = (async () => {
      for await (const _ of sub) void _;
      return "ended";
    })();
    await t.store.close();
    expect(await loop).toBe("ended");
    await expect(t.store.append("s", [ev(1)], "any")).rejects.toThrow(/closed/);
    await rm(dir, { recursive: true, force: true });
  });
});

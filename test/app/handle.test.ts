import { describe, expect, it, vi } from "vitest";
import { AggregateCache } from "../../src/app/aggregate-cache.js";
import { handleCommand, loadAggregate } from "../../src/app/handle.js";
import type { Decider } from "../../src/domain/shared/decider.js";
import { DomainError } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { WrongExpectedRevisionError, type ExpectedRevision, type NewEvent } from "../../src/infra/eventstore/port.js";
import { ADMIN } from "./support.js";

/** A counter that refuses to go above `max`. */
type Ev = { type: "Added"; data: { n: number } };
type Cmd = { type: "Add"; n: number };
const counter: Decider<Cmd, number, Ev> = {
  initialState: () => 0,
  evolve: (s, e) => s + e.data.n,
  decide: (c, s) => {
    if (s + c.n > 10) throw new DomainError("CONFLICT", "too much");
    return c.n === 0 ? [] : [{ type: "Added", data: { n: c.n } }];
  },
};
const add = (n: number): Cmd => ({ type: "Add", n });

describe("handleCommand", () => {
  it("reads, decides and appends with no_stream first, then the folded revision", async () => {
    const store = new MemoryEventStore();
    const spy = vi.spyOn(store, "append");
    const r1 = await handleCommand(store, "c-1", counter, add(2), ADMIN);
    const r2 = await handleCommand(store, "c-1", counter, add(3), ADMIN);
    expect(spy.mock.calls.map((c) => c[2])).toEqual(["no_stream", 0]);
    expect([r1.state, r1.revision, r2.state, r2.revision, r2.previousState]).toEqual([2, 0, 5, 1, 2]);
    expect(r2.events).toEqual([{ type: "Added", data: { n: 3 } }]);
  });
  it("gives every event a fresh id and the context's metadata", async () => {
    const store = new MemoryEventStore();
    await handleCommand(store, "c-1", counter, add(1), ADMIN);
    await handleCommand(store, "c-1", counter, add(1), ADMIN);
    const events = await store.readStream("c-1");
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
    expect(events[0]!.metadata).toEqual({ principal: "admin", correlationId: "corr-1", causationId: "req-1", at: ADMIN.at });
  });
  it("appends nothing for a no-op decision and reports -1 for a missing stream", async () => {
    const store = new MemoryEventStore();
    const r = await handleCommand(store, "c-1", counter, add(0), ADMIN);
    expect(r).toEqual({ events: [], state: 0, revision: -1, position: null, previousState: 0 });
    expect(await store.readStream("c-1")).toEqual([]);
  });
  it("lets refusals through and appends nothing", async () => {
    const store = new MemoryEventStore();
    await expect(handleCommand(store, "c-1", counter, add(11), ADMIN)).rejects.toBeInstanceOf(DomainError);
    expect(await store.headPosition()).toBeUndefined();
  });
  it("retries on a revision conflict, deciding again on the new state", async () => {
    const store = new MemoryEventStore();
    const append = store.append.bind(store);
    let raced = false;
    vi.spyOn(store, "append").mockImplementation(async (s: string, events: readonly NewEvent[], rev: ExpectedRevision) => {
      if (!raced) {
        raced = true;
        await append(s, [{ id: "other", type: "Added", data: { n: 9 }, metadata: { principal: "x", correlationId: "x", causationId: "x", at: ADMIN.at } }], "any");
      }
      return append(s, events, rev);
    });
    const seen: number[] = [];
    await expect(handleCommand(store, "c-1", counter, (s) => (seen.push(s), add(2)), ADMIN)).rejects.toMatchObject({ code: "CONFLICT", message: "too much" });
    expect(seen).toEqual([0, 9]);
  });
  it("gives up with CONFLICT after the bounded number of attempts", async () => {
    const store = new MemoryEventStore();
    vi.spyOn(store, "append").mockRejectedValue(new WrongExpectedRevisionError("c-1", "no_stream", 0));
    await expect(handleCommand(store, "c-1", counter, add(1), ADMIN, { maxAttempts: 3 })).rejects.toMatchObject({ code: "CONFLICT", message: /gave up after 3/ });
    expect(store.append).toHaveBeenCalledTimes(3);
  });
  it("exactly one of many concurrent commands wins a contended limit", async () => {
    const store = new MemoryEventStore();
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => handleCommand(store, "c-1", counter, add(6), ADMIN)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((await loadAggregate(store, "c-1", counter)).state).toBe(6);
  });

  describe("aggregate cache", () => {
    it("reads only the events after the cached revision", async () => {
      const store = new MemoryEventStore();
      const cache = new AggregateCache();
      for (let i = 0; i < 5; i++) await handleCommand(store, "c-1", counter, add(1), ADMIN, { cache });
      const read = vi.spyOn(store, "readStream");
      await handleCommand(store, "c-1", counter, add(1), ADMIN, { cache });
      expect(read.mock.calls[0]![1]).toEqual({ fromRevision: 5 });
      expect(cache.get("c-1")).toEqual({ state: 6, revision: 5, position: (await store.headPosition())! });
    });
    it("stays correct when another writer appends behind its back, and under conflicts", async () => {
      const store = new MemoryEventStore();
      const cache = new AggregateCache();
      await handleCommand(store, "c-1", counter, add(1), ADMIN, { cache });
      await handleCommand(store, "c-1", counter, add(2), ADMIN); // no cache: another process
      await Promise.allSettled([1, 1, 1].map((n) => handleCommand(store, "c-1", counter, add(n), ADMIN, { cache })));
      expect((await loadAggregate(store, "c-1", counter, cache)).state).toBe((await loadAggregate(store, "c-1", counter)).state);
      expect(cache.get("c-1")!.revision).toBe(4);
    });
    it("folds the events appended since the cached revision once for loads of one stream that run together", async () => {
      const store = new MemoryEventStore();
      const cache = new AggregateCache();
      await handleCommand(store, "c-1", counter, add(1), ADMIN, { cache });
      for (let i = 0; i < 9; i++) await handleCommand(store, "c-1", counter, add(1), ADMIN); // another process
      const evolve = vi.fn(counter.evolve);
      const read = vi.spyOn(store, "readStream");
      const loads = await Promise.all(Array.from({ length: 8 }, () => loadAggregate(store, "c-1", { ...counter, evolve }, cache)));
      expect(loads.map((l) => [l.state, l.revision])).toEqual(Array.from({ length: 8 }, () => [10, 9]));
      expect([evolve.mock.calls.length, read.mock.calls.length]).toEqual([9, 2]);
      expect(read.mock.calls.map((c) => c[1])).toEqual([{ fromRevision: 1 }, { fromRevision: 10 }]);
    });
    it("a load asked for while another runs sees what was appended before it was asked for", async () => {
      const store = new MemoryEventStore();
      const cache = new AggregateCache();
      await handleCommand(store, "c-1", counter, add(1), ADMIN, { cache });
      const first = loadAggregate(store, "c-1", counter, cache);
      await handleCommand(store, "c-1", counter, add(2), ADMIN); // another process, while the first load runs
      const second = loadAggregate(store, "c-1", counter, cache);
      expect([(await first).state, (await second).state, (await second).revision]).toEqual([1, 3, 1]);
    });
    it("a failed load leaves the loads asked for after it to read for themselves", async () => {
      const store = new MemoryEventStore();
      const cache = new AggregateCache();
      await handleCommand(store, "c-1", counter, add(4), ADMIN);
      const read = store.readStream.bind(store);
      vi.spyOn(store, "readStream").mockImplementationOnce(async () => {
        throw new Error("the store is down");
      }).mockImplementation(read);
      const [failed, next] = await Promise.allSettled([loadAggregate(store, "c-1", counter, cache), loadAggregate(store, "c-1", counter, cache)]);
      expect([failed.status, next.status === "fulfilled" && next.value.state]).toEqual(["rejected", 4]);
      expect((await loadAggregate(store, "c-1", counter, cache)).state).toBe(4);
    });
    it("never goes back to an older revision, and drops the least recently used entry", () => {
      const cache = new AggregateCache(2);
      cache.set("a", { state: 2, revision: 2, position: 2n });
      cache.set("a", { state: 1, revision: 1, position: 1n });
      expect(cache.get("a")).toEqual({ state: 2, revision: 2, position: 2n });
      cache.set("b", { state: 0, revision: 0, position: 0n });
      cache.get("a");
      cache.set("c", { state: 0, revision: 0, position: 0n });
      expect([cache.get("a") !== undefined, cache.get("b") !== undefined, cache.size]).toEqual([true, false, 2]);
    });
    it("keeps a fleet of hosts reporting in turn cached while other streams come and go", () => {
      const cache = new AggregateCache(2, 4);
      const entry = { state: 0, revision: 0, position: 0n };
      for (let round = 0; round < 3; round++) {
        for (let h = 0; h < 4; h++) {
          if (round > 0) expect(cache.get(`host-h${h}`), `host-h${h} in round ${round}`).toBeDefined();
          cache.set(`host-h${h}`, entry);
          cache.set(`arq-${round}-${h}`, entry);
        }
      }
      expect(cache.size).toBe(6);
      cache.set("host-h4", entry);
      expect([cache.get("host-h0"), cache.size]).toEqual([undefined, 6]);
    });
  });
});

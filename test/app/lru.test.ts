import { describe, expect, it } from "vitest";
import { LruMap } from "../../src/app/lru.js";

describe("LruMap", () => {
  it("holds at most max entries and drops the oldest unused first", () => {
    const m = new LruMap<number, string>(10);
    for (let i = 0; i < 25; i++) m.set(i, `v${i}`);
    expect(m.size).toBe(10);
    expect(m.peek(14)).toBeUndefined();
    for (let i = 15; i < 25; i++) expect(m.peek(i)).toBe(`v${i}`);
  });

  it("never drops an entry that is read more often than once every 3/4 max placements", () => {
    const m = new LruMap<string, number>(100);
    m.set("hot", 0);
    for (let i = 0; i < 10_000; i++) {
      m.set(`cold-${i}`, i);
      if (i % 70 === 0) expect(m.get("hot")).toBe(0);
    }
    expect(m.get("hot")).toBe(0);
    expect(m.size).toBe(100);
  });

  it("drops an entry nobody reads once max newer ones were placed", () => {
    const m = new LruMap<string, number>(100);
    m.set("idle", 1);
    m.get("idle");
    for (let i = 0; i < 100; i++) m.set(`n-${i}`, i);
    expect(m.peek("idle")).toBeUndefined();
  });

  it("set replaces the value, and a rewritten entry stays as young as a read one", () => {
    const m = new LruMap<string, number>(100);
    m.set("k", 1);
    for (let i = 0; i < 1_000; i++) {
      m.set(`n-${i}`, i);
      if (i % 50 === 0) m.set("k", i);
    }
    expect(m.peek("k")).toBe(950);
    m.delete("k");
    expect(m.get("k")).toBeUndefined();
  });
});

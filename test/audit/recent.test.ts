/** The walk's memory of recent streams (src/audit/recent.ts): bounded, and the recent half always kept. */
import { describe, expect, it } from "vitest";
import { Recent } from "../../src/audit/recent.js";

describe("Recent", () => {
  it("keeps at least the last max / 2 keys, never more than max", () => {
    const r = new Recent<number, string>(10);
    for (let i = 0; i < 1000; i++) {
      r.set(i, `v${i}`);
      for (let k = Math.max(0, i - 4); k <= i; k++) expect(r.get(k)).toBe(`v${k}`);
      let kept = 0;
      for (let k = 0; k <= i; k++) if (r.get(k) !== undefined) kept++;
      expect(kept).toBeLessThanOrEqual(10);
    }
  });

  it("a key read from the old generation is kept as a recent one; a set replaces the value", () => {
    const r = new Recent<string, number>(4);
    r.set("a", 1);
    r.set("b", 2);
    r.set("c", 3); // a and b are old now
    expect(r.get("a")).toBe(1); // moves to the young generation, with c
    r.set("d", 4); // young (c, a) was full: it becomes old, b is forgotten
    expect(r.get("b")).toBeUndefined();
    expect([r.get("a"), r.get("c"), r.get("d")]).toEqual([1, 3, 4]);
    r.set("d", 5);
    expect(r.get("d")).toBe(5);
  });
});

/** A PartedSet (src/infra/readstore/parted-set.ts) answers as a Set does across its parts. */
import { describe, expect, it } from "vitest";
import { PART, PartedSet } from "../../src/infra/readstore/parted-set.js";

describe("a set that grows a part at a time", () => {
  it("finds every value added, in the first part, the last and between, and no other", () => {
    const set = new PartedSet();
    const n = 2 * PART + 5;
    for (let i = 0; i < n; i++) set.add(`key-${i}`);
    for (const i of [0, PART - 1, PART, PART + 1, 2 * PART, n - 1]) expect(set.has(`key-${i}`)).toBe(true);
    expect(set.has(`key-${n}`)).toBe(false);
    expect(set.has("key--1")).toBe(false);
  });
});

/**
 * The memory read store's sorted set against a plain model, through random adds (with and without
 * nx), score changes and removals that take sets past the small size and back, and past a chunk.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareEntries } from "../../src/infra/readstore/keys-and-cursors.js";
import { SortedSet } from "../../src/infra/readstore/sorted-set.js";

type Op = { kind: "add"; m: string; s: number; nx: boolean } | { kind: "remove"; m: string };

function check(ops: Op[], members: number, initial: Array<[string, number]> = []) {
  const set = SortedSet.of(initial);
  const model = new Map<string, number>();
  for (const [m, s] of initial) model.set(m, s);
  for (const op of ops) {
    if (op.kind === "add") {
      const had = model.get(op.m);
      const changed = had === undefined || (!op.nx && had !== op.s);
      expect(set.add(op.m, op.s, op.nx)).toBe(changed);
      if (changed) model.set(op.m, op.s);
    } else {
      expect(set.remove(op.m)).toBe(model.delete(op.m));
    }
    expect(set.size).toBe(model.size);
  }
  const expected = [...model].sort((a, b) => compareEntries(a[1], a[0], b[1], b[0]));
  expect([...set.entriesAfter()]).toEqual(expected);
  for (let i = 0; i < members; i++) expect(set.score(`m${i}`)).toBe(model.get(`m${i}`));
  for (const s of [-1, 0, 7, 20, 21]) expect(set.countUpTo(s)).toBe(expected.filter(([, x]) => x <= s).length);
  if (expected.length > 2) {
    const [m, s] = expected[1]!;
    expect([...set.entriesAfter({ score: s, member: m })]).toEqual(expected.slice(2));
  }
}

const ops = (members: number, n: number) =>
  fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant("add" as const), m: fc.integer({ min: 0, max: members - 1 }).map((i) => `m${i}`), s: fc.integer({ min: 0, max: 20 }), nx: fc.boolean() }),
      fc.record({ kind: fc.constant("remove" as const), m: fc.integer({ min: 0, max: members - 1 }).map((i) => `m${i}`) }),
    ),
    { maxLength: n },
  );

describe("SortedSet", () => {
  it("matches a plain model around the small size (16 members)", () => {
    fc.assert(fc.property(ops(24, 120), (o) => check(o, 24)), { numRuns: 300 });
  });

  it("matches a plain model past a chunk (512 members)", () => {
    fc.assert(fc.property(ops(700, 2000), (o) => check(o, 700)), { numRuns: 20 });
  });

  // What a snapshot holds (in order, each member once) is built at once; anything else one by one, later entries winning.
  const entries = (members: number, n: number) => fc.array(fc.tuple(fc.integer({ min: 0, max: members - 1 }).map((i) => `m${i}`), fc.integer({ min: 0, max: 20 })), { maxLength: n });
  const sorted = (members: number, n: number) =>
    entries(members, n).map((list) => [...new Map(list)].sort((a, b) => compareEntries(a[1], a[0], b[1], b[0])));

  it("built from entries in order (a snapshot's), matches the model through later changes, past the small size and a chunk", () => {
    fc.assert(fc.property(sorted(24, 30), ops(24, 60), (initial, o) => check(o, 24, initial)), { numRuns: 300 });
    fc.assert(fc.property(sorted(900, 900), ops(900, 300), (initial, o) => check(o, 900, initial)), { numRuns: 20 });
  });

  it("built from entries out of order or with a member twice, is what adding them one by one gives", () => {
    fc.assert(fc.property(entries(24, 40), ops(24, 40), (initial, o) => check(o, 24, initial)), { numRuns: 300 });
    expect([...SortedSet.of([["a", 1], ["a", 2], ["b", 3]]).entriesAfter()]).toEqual([["a", 2], ["b", 3]]);
  });
});

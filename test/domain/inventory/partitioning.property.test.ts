/**
 * Property: random allocate / create / fail / release / destroy sequences over random partitioned
 * devices never pass a counter, overlap a slot, exceed maxInstances or break the one-profile rule;
 * never refuse what a brute-force reference (slot bitmaps) can place; and fitsNow equals the
 * reference's exhaustive count.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { spanBits } from "../../../src/domain/inventory/partition-fit.js";
import { allocatePartition, fitsNow, partitionCreated, partitionDestroyed, partitionFailed, partitioningFromReport, releasePartition } from "../../../src/domain/inventory/partitioning.js";
import type { DevicePartitioning } from "../../../src/domain/inventory/partition-state.js";
import type { DriverPartitioning, DriverPartitionProfile, SlotPlacement } from "../../../src/domain/inventory/partitioning-report.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { h100 } from "./h100.js";

const ARQS = 8;

const placementArb = (slots: number): fc.Arbitrary<SlotPlacement> =>
  fc.integer({ min: 1, max: Math.max(1, slots) }).chain((size) => fc.record({ start: fc.integer({ min: 0, max: Math.max(0, slots - size) }), size: fc.constant(size) }));

const deviceArb: fc.Arbitrary<DriverPartitioning> = fc
  .record({ slots: fc.integer({ min: 0, max: 8 }), counters: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 2 }), one: fc.boolean() })
  .chain(({ slots, counters, one }) =>
    fc.record({
      counters: fc.constant(counters.map((total, i) => ({ name: `c${i}`, total }))),
      slots: fc.constant(slots),
      oneProfileAtATime: fc.constant(one),
      partitions: fc.constant([]),
      profiles: fc.array(
        fc.record({
          consumes: fc.array(fc.record({ counter: fc.constantFrom(...counters.map((_, i) => `c${i}`)), amount: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 2 }),
          placements: slots === 0 ? fc.constant<SlotPlacement[]>([]) : fc.uniqueArray(placementArb(slots), { maxLength: 5, selector: (s) => `${s.start}:${s.size}` }),
          maxInstances: fc.option(fc.integer({ min: 1, max: 4 })),
        }),
        { minLength: 1, maxLength: 4 },
      ).map((ps) => ps.map((p, i): DriverPartitionProfile => ({ ...p, name: `p${i}`, toolId: String(i), resourceClass: `CUSTOM_P${i}`, consumes: dedupe(p.consumes) }))),
    }),
  );

function dedupe(cs: Array<{ counter: string; amount: number }>) {
  return cs.filter((c, i) => cs.findIndex((d) => d.counter === c.counter) === i);
}

type Op =
  | { op: "allocate"; profile: number; arq: number; firstFit: boolean }
  | { op: "created" | "failed"; arq: number }
  | { op: "release"; arq: number; keepIdle: boolean }
  | { op: "destroyed"; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant("allocate" as const), profile: fc.nat(5), arq: fc.nat(ARQS - 1), firstFit: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("created" as const), arq: fc.nat(ARQS - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("failed" as const), arq: fc.nat(ARQS - 1) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("release" as const), arq: fc.nat(ARQS - 1), keepIdle: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("destroyed" as const), pick: fc.nat(20) }) },
);

/** Every rule checked from scratch over the partitions as a list. */
function violations(p: DevicePartitioning): string[] {
  const out: string[] = [];
  for (const [name, total] of p.counters) {
    const used = p.partitions.reduce((s, x) => s + (p.profiles.get(x.profile)!.consumes.find((c) => c.counter === name)?.amount ?? 0), 0);
    if (used > total) out.push(`counter ${name} ${used} > ${total}`);
  }
  let bits = 0;
  for (const x of p.partitions) {
    if (!x.placement) continue;
    if (x.placement.start + x.placement.size > p.slots) out.push("placement past the slots");
    if (bits & spanBits(x.placement)) out.push("slot overlap");
    bits |= spanBits(x.placement);
  }
  for (const prof of p.profiles.values()) {
    if (prof.maxInstances !== null && p.partitions.filter((x) => x.profile === prof.name).length > prof.maxInstances) out.push(`maxInstances of ${prof.name}`);
  }
  if (p.oneProfileAtATime && new Set(p.partitions.map((x) => x.profile)).size > 1) out.push("two profiles at once");
  const holders = p.partitions.flatMap((x) => (x.holder ? [x.holder] : []));
  if (new Set(holders).size !== holders.length) out.push("an ARQ holds two partitions");
  return out;
}

/** The reference: the most partitions of the profile that could be added, by exhaustive search over the placements. */
function referenceMakeable(p: DevicePartitioning, prof: DriverPartitionProfile): number {
  const used = new Map<string, number>();
  for (const x of p.partitions) for (const c of p.profiles.get(x.profile)!.consumes) used.set(c.counter, (used.get(c.counter) ?? 0) + c.amount);
  if (p.oneProfileAtATime && p.partitions.some((x) => x.profile !== prof.name)) return 0;
  const existing = p.partitions.filter((x) => x.profile === prof.name).length;
  const fitsCounters = (n: number) =>
    prof.consumes.every((c) => p.counters.has(c.counter) && (used.get(c.counter) ?? 0) + c.amount * n <= p.counters.get(c.counter)!) &&
    (prof.maxInstances === null || existing + n <= prof.maxInstances);
  if (p.slots === 0 || prof.placements.length === 0) {
    let n = 0;
    while (fitsCounters(n + 1) && n < 64) n++;
    return n;
  }
  let slotBits = 0;
  for (const x of p.partitions) if (x.placement) slotBits |= spanBits(x.placement);
  const spans = prof.placements.filter((s) => s.start + s.size <= p.slots);
  const best = (i: number, bits: number, n: number): number => {
    if (i === spans.length) return n;
    const skip = best(i + 1, bits, n);
    const b = spanBits(spans[i]!);
    return (bits & b) === 0 && fitsCounters(n + 1) ? Math.max(skip, best(i + 1, bits | b, n + 1)) : skip;
  };
  return best(0, slotBits, 0);
}

function referenceFits(p: DevicePartitioning, prof: DriverPartitionProfile): number {
  return p.partitions.filter((x) => x.profile === prof.name && x.status === "READY" && x.holder === null).length + referenceMakeable(p, prof);
}

function step(p: DevicePartitioning, op: Op, serial: { n: number }): DevicePartitioning {
  const arq = `arq-${"arq" in op ? op.arq : 0}`;
  switch (op.op) {
    case "allocate": {
      const profile = [...p.profiles.values()][op.profile % p.profiles.size]!;
      const alreadyHolds = p.partitions.some((x) => x.holder === arq);
      const canHave = referenceFits(p, profile) > 0;
      let next: DevicePartitioning | null = null;
      try {
        next = allocatePartition(p, profile.name, arq, op.firstFit ? "first-fit" : "best-fit").partitioning;
      } catch (e) {
        expect(e).toBeInstanceOf(DomainError);
      }
      if (!alreadyHolds) expect(next !== null, next ? "granted what the reference cannot place" : "refused what the reference can place").toBe(canHave);
      return next ?? p;
    }
    case "created":
      return partitionCreated(p, arq, { profile: "", uuid: `u${serial.n++}`, placement: null, toolRef: {}, attachHandle: { type: "MIG", info: {} } as never });
    case "failed":
      return partitionFailed(p, arq);
    case "release":
      return releasePartition(p, arq, op.keepIdle).partitioning;
    case "destroyed": {
      const going = p.partitions.filter((x) => x.status === "DESTROYING");
      return going.length ? partitionDestroyed(p, going[op.pick % going.length]!.uuid!) : p;
    }
  }
}

function run(device: DriverPartitioning, ops: Op[]) {
  let p = partitioningFromReport(device);
  const serial = { n: 0 };
  for (const op of ops) {
    p = step(p, op, serial);
    expect(violations(p)).toEqual([]);
    for (const prof of p.profiles.values()) expect(fitsNow(p, prof.name), `fitsNow(${prof.name})`).toBe(referenceFits(p, prof));
  }
}

describe("partitioning, property", () => {
  it("random devices: no rule broken, nothing refused that the reference places, fitsNow exact", () => {
    fc.assert(fc.property(deviceArb, fc.array(opArb, { maxLength: 40 }), run), { numRuns: 1500 });
  });

  it("an H100: the same over longer sequences", () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 120 }), (ops) => run(h100(), ops)), { numRuns: 500 });
  });
});

/**
 * Property: thousands of random bind / release / report sequences on a NIC whose VFs share its
 * bandwidth, checked against a simple model (a map of ARQ to amount): the sum drawn never passes
 * the total when a draw is granted, nothing the model allows is refused, and what the host stream
 * records always equals the model.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deviceCapacitiesView } from "../../../src/app/capacities.js";
import type { HostCommand } from "../../../src/domain/inventory/decider.js";
import type { HostState } from "../../../src/domain/inventory/state.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { HOST, apply, at, release, report } from "./fixtures.js";
import { BW, NIC_RP, drawing, nic } from "./nic.js";
import { fold } from "./fixtures.js";

const ARQS = 8;
const VFS = 4;

type Op = { op: "bind"; arq: number; amount: number } | { op: "release"; arq: number } | { op: "total"; total: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant("bind" as const), arq: fc.nat(ARQS - 1), amount: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("release" as const), arq: fc.nat(ARQS - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("total" as const), total: fc.integer({ min: 1, max: 30 }) }) },
);

const bind = (arq: string, amount: number): HostCommand => ({
  type: "AllocateAttachHandle",
  data: { hostname: HOST, rpUuid: NIC_RP, arqUuid: arq, instanceUuid: `vm-${arq}`, at, requirements: drawing({ [BW]: amount }) },
});

const capacityOf = (s: HostState) => deviceCapacitiesView(s, [...s.devices.values()][0]!)[0]!;

describe("capacity property", () => {
  it("never grants past the total, refuses nothing possible, and matches the model", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.array(opArb, { maxLength: 60 }), (initial, ops) => {
        let total = initial;
        let s = fold(report(fold([]), [nic({ vfs: VFS, bandwidth: total })]).events);
        const model = new Map<string, number>();
        const used = () => [...model.values()].reduce((a, b) => a + b, 0);
        for (const op of ops) {
          if (op.op === "total") {
            total = op.total;
            s = fold(report(s, [nic({ vfs: VFS, bandwidth: total })]).events, s);
          } else if (op.op === "release") {
            s = apply(s, release(`arq-${op.arq}`));
            model.delete(`arq-${op.arq}`);
          } else {
            const arq = `arq-${op.arq}`;
            const possible = !model.has(arq) && model.size < VFS && op.amount <= total - used();
            try {
              s = apply(s, bind(arq, op.amount));
              // Binding again the ARQ that holds its handle is a no-op: it draws nothing more.
              if (!model.has(arq)) {
                expect(possible).toBe(true);
                model.set(arq, op.amount);
                expect(used()).toBeLessThanOrEqual(total);
              }
            } catch (err) {
              if (!(err instanceof DomainError)) throw err;
              expect(possible).toBe(false);
            }
          }
          const c = capacityOf(s);
          expect(c.total).toBe(total);
          expect(c.used).toBe(used());
          expect(new Map(c.holders.map((h) => [h.arqUuid, h.amount]))).toEqual(model);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

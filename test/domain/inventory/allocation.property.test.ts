/**
 * Property: random interleavings of allocate / release / delete, with handles and the device
 * disappearing and coming back, never give one handle to two ARQs and never leak one.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import type { HostState } from "../../../src/domain/inventory/state.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { allocate, apply, at, bdf, decide, deployable, fpga, HOST, pci, release, report, reported } from "./fixtures.js";

const RP = rpUuidFor(`${HOST}_${bdf("af")}`);
const ARQS = 6;

type Op =
  | { op: "allocate"; arq: number }
  | { op: "release"; arq: number }
  | { op: "delete"; arq: number }
  | { op: "report"; present: boolean[] }
  | { op: "reportWithoutDevice" }
  | { op: "maintenance"; on: boolean };

const opArb = (handles: number): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant("allocate" as const), arq: fc.nat(ARQS - 1) }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant("release" as const), arq: fc.nat(ARQS - 1) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant("delete" as const), arq: fc.nat(ARQS - 1) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant("report" as const), present: fc.array(fc.boolean(), { minLength: handles, maxLength: handles }) }) },
    { weight: 1, arbitrary: fc.constant({ op: "reportWithoutDevice" as const }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("maintenance" as const), on: fc.boolean() }) },
  );

function devices(handles: number, present: boolean[]) {
  const attachHandles = present.map((p, i) => (p ? { type: "PCI" as const, info: pci("af", String(i)) } : null)).filter((h) => h !== null);
  return [{ ...fpga("af"), deployables: [{ ...deployable("af", { handles }), attachHandles }] }];
}

function handlesOf(state: HostState) {
  return [...state.devices.values()].flatMap((d) => [...d.deployables.values()].flatMap((dep) => [...dep.handles.values()].map((h) => ({ device: d, h }))));
}

function checkInvariants(state: HostState, holding: Set<string>) {
  const allocated = handlesOf(state).filter(({ h }) => h.allocatedTo);
  // One handle, one ARQ; the allocation index and the tree agree.
  expect(new Set(allocated.map(({ h }) => h.allocatedTo!.arqUuid)).size).toBe(allocated.length);
  expect(new Set([...state.allocations.values()].map((a) => a.handleUuid)).size).toBe(state.allocations.size);
  expect(state.allocations.size).toBe(allocated.length);
  for (const { h } of allocated) expect(state.allocations.get(h.allocatedTo!.arqUuid)?.handleUuid).toBe(h.uuid);
  // No leak: exactly the ARQs that were given a handle and not released hold one.
  expect(new Set(state.allocations.keys())).toEqual(holding);
  // A lost handle is always an allocated one (lost handles go when released).
  for (const { h } of handlesOf(state)) if (h.lost) expect(h.allocatedTo).not.toBeNull();
}

describe("allocation property", () => {
  it("never allocates one handle twice and never leaks one", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }).chain((handles) => fc.tuple(fc.constant(handles), fc.array(opArb(handles), { maxLength: 60 }))),
        ([handles, ops]) => {
          let state = reported(devices(handles, Array(handles).fill(true)));
          const holding = new Set<string>();
          const deleted = new Set<string>();
          const deviceUuid = [...state.devices.keys()][0]!;
          const run = (cmd: Parameters<typeof decide>[1]) => (state = apply(state, cmd));
          for (const op of ops) {
            switch (op.op) {
              case "allocate": {
                const arq = `arq-${op.arq}`;
                if (deleted.has(arq)) break;
                try {
                  run(allocate(RP, arq, `vm-${op.arq}`));
                  holding.add(arq);
                } catch (err) {
                  if (!(err instanceof DomainError)) throw err;
                  // Refused only when nothing could be given.
                  const device = state.devices.get(deviceUuid);
                  const free = handlesOf(state).filter(({ h }) => !h.lost && !h.allocatedTo);
                  expect(holding.has(arq)).toBe(false);
                  expect(!device || device.lostArqs !== null || device.status === "MAINTAINING" || free.length === 0).toBe(true);
                }
                break;
              }
              case "release":
              case "delete": {
                const arq = `arq-${op.arq}`;
                run(release(arq));
                holding.delete(arq);
                if (op.op === "delete") deleted.add(arq);
                break;
              }
              case "report":
                state = apply(state, { type: "ReportHostInventory", data: { hostname: HOST, devices: devices(handles, op.present), at } });
                break;
              case "reportWithoutDevice":
                state = apply(state, { type: "ReportHostInventory", data: { hostname: HOST, devices: [], at } });
                break;
              case "maintenance":
                if (state.devices.has(deviceUuid)) {
                  run({ type: "SetDeviceStatus", data: { hostname: HOST, deviceUuid, status: op.on ? "MAINTAINING" : "ENABLED", at } });
                }
                break;
            }
            checkInvariants(state, holding);
          }
          // Releasing everything frees every handle and leaves nothing lost behind.
          for (const arq of [...holding]) run(release(arq));
          expect(state.allocations.size).toBe(0);
          expect(handlesOf(state).every(({ h }) => !h.allocatedTo && !h.lost)).toBe(true);
          expect([...state.devices.values()].every((d) => d.lostArqs === null)).toBe(true);
          // And a full report afterwards restores every handle, free.
          state = apply(state, { type: "ReportHostInventory", data: { hostname: HOST, devices: devices(handles, Array(handles).fill(true)), at } });
          expect(handlesOf(state).filter(({ h }) => !h.allocatedTo && !h.lost)).toHaveLength(handles);
          expect(report(state, devices(handles, Array(handles).fill(true))).events).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * HostState.inventoryChanges counts every event but allocations and releases; confirmHostInventory
 * relies on it: while it stays the same, a report that diffed to nothing still does.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import type { HostState } from "../../../src/domain/inventory/state.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { allocate, apply, at, bdf, decide, deployable, fold, fpga, HOST, pci, release, report, reported, types } from "./fixtures.js";

const rp = (bus: string) => rpUuidFor(`${HOST}_${bdf(bus)}`);
const reportCmd = (devices: unknown) => ({ type: "ReportHostInventory" as const, data: { hostname: HOST, devices, at } });

describe("inventoryChanges", () => {
  it("counts inventory events, not allocations or releases", () => {
    const host = reported([fpga("af", { handles: 2 })]);
    expect(host.inventoryChanges).toBe(6); // device, deployable, 2 attributes, 2 handles
    const held = apply(apply(host, allocate(rp("af"), "arq-1")), allocate(rp("af"), "arq-2"));
    expect(held.allocations.size).toBe(2);
    expect(held.inventoryChanges).toBe(6);
    expect(apply(held, release("arq-1")).inventoryChanges).toBe(6);
    const deviceUuid = [...host.devices.keys()][0]!;
    expect(apply(held, { type: "SetDeviceStatus", data: { hostname: HOST, deviceUuid, status: "MAINTAINING", at } }).inventoryChanges).toBe(7);
  });

  it("counts the removal a release brings for a lost handle", () => {
    const held = apply(reported([fpga("af", { handles: 2 })]), allocate(rp("af"), "arq-1"));
    const oneHandle = [{ ...fpga("af"), deployables: [{ ...deployable("af", { handles: 2 }), attachHandles: [{ type: "PCI" as const, info: pci("af", "1") }] }] }];
    const lost = fold(report(held, oneHandle).events, held);
    expect(lost.inventoryChanges).toBe(7); // AttachHandleLost
    expect(report(lost, oneHandle).events).toEqual([]);
    expect(types(decide(lost, release("arq-1")))).toEqual(["AttachHandleReleased", "AttachHandleRemoved"]);
    const released = apply(lost, release("arq-1"));
    expect(released.inventoryChanges).toBe(8);
    expect(report(released, oneHandle).events).toEqual([]);
  });

  it("property: while it stays the same, a report that diffed to nothing still does", () => {
    const BUSES = ["af", "b0"] as const;
    const deviceArb = fc.record({
      present: fc.boolean(),
      stub: fc.boolean(),
      firmware: fc.constantFrom("1.0", "2.0"),
      handles: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      deployablePresent: fc.boolean(),
    });
    type Spec = typeof deviceArb extends fc.Arbitrary<infer T> ? T : never;
    const opArb = fc.oneof(
      { weight: 3, arbitrary: fc.record({ op: fc.constant("report" as const), devices: fc.tuple(deviceArb, deviceArb) }) },
      { weight: 4, arbitrary: fc.record({ op: fc.constant("allocate" as const), bus: fc.constantFrom(...BUSES), arq: fc.nat(4) }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant("release" as const), arq: fc.nat(4) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("maintenance" as const), bus: fc.constantFrom(...BUSES), on: fc.boolean() }) },
    );
    const devicesOf = (specs: Spec[]): DriverDevice[] =>
      specs.flatMap((s, i) => {
        const bus = BUSES[i]!;
        if (!s.present) return [];
        const attachHandles = s.handles.flatMap((p, k) => (p ? [{ type: "PCI" as const, info: pci(bus, String(k)) }] : []));
        const deployables = s.deployablePresent ? [{ ...deployable(bus, { handles: 3 }), attachHandles }] : [];
        return [{ ...fpga(bus), stub: s.stub, vendorBoardInfo: { firmware: s.firmware }, deployables }];
      });
    const full = devicesOf(BUSES.map(() => ({ present: true, stub: false, firmware: "1.0", handles: [true, true, true], deployablePresent: true })));

    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        let state: HostState = reported(full);
        // Reports that diffed to nothing, with the count they were checked at.
        let settled: Array<{ devices: DriverDevice[]; count: number }> = [{ devices: full, count: state.inventoryChanges }];
        for (const op of ops) {
          try {
            switch (op.op) {
              case "report": {
                const devices = devicesOf(op.devices);
                state = apply(state, reportCmd(devices));
                if (report(state, devices).events.length === 0) settled.push({ devices, count: state.inventoryChanges });
                break;
              }
              case "allocate":
                state = apply(state, allocate(rp(op.bus), `arq-${op.arq}`));
                break;
              case "release":
                state = apply(state, release(`arq-${op.arq}`));
                break;
              case "maintenance": {
                const deviceUuid = [...state.devices.values()].find((d) => d.controlPath.info.bus === op.bus)?.uuid;
                if (deviceUuid) state = apply(state, { type: "SetDeviceStatus", data: { hostname: HOST, deviceUuid, status: op.on ? "MAINTAINING" : "ENABLED", at } });
                break;
              }
            }
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
          }
          settled = settled.filter((s) => s.count === state.inventoryChanges);
          for (const s of settled) expect(types(report(state, s.devices).events)).toEqual([]);
        }
      }),
      { numRuns: 400 },
    );
  });
});

/** A report that changed the host records its digest in the same append, for confirmations by any process. */
import { describe, expect, it } from "vitest";
import { reportDigest } from "../../../src/domain/inventory/digest.js";
import type { HostCommand } from "../../../src/domain/inventory/decider.js";
import { allocate, apply, at, bdf, decide, fold, fpga, HOST, release, reported, types } from "./fixtures.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";

const reportOf = (devices: unknown): HostCommand => ({ type: "ReportHostInventory", data: { hostname: HOST, devices, at } });

describe("HostReportSettled", () => {
  it("ends a report that changed the host, with the report's digest and the devices it now finds unchanged", () => {
    const devices = [fpga("af", { handles: 2 }), fpga("b0")];
    const events = decide(reported(), reportOf(devices));
    expect(events.at(-1)).toEqual({ type: "HostReportSettled", data: { hostname: HOST, digest: reportDigest(devices), unchanged: 2, at } });
    const state = fold(events, reported());
    expect(state.settledReport).toEqual({ digest: reportDigest(devices), unchanged: 2, inventoryChanges: state.inventoryChanges });
  });

  it("is not written for a report that changes nothing, and does not count as an inventory change", () => {
    const devices = [fpga("af", { handles: 2 })];
    const state = apply(reported(), reportOf(devices));
    expect(decide(state, reportOf(devices))).toEqual([]);
    const before = fold(decide(reported(), reportOf(devices)).slice(0, -1), reported());
    expect(state.inventoryChanges).toBe(before.inventoryChanges);
  });

  it("settles a report that loses a held device: the lost device emits nothing more until released", () => {
    const rp = rpUuidFor(`${HOST}_${bdf("af")}`);
    const held = apply(apply(reported(), reportOf([fpga("af", { handles: 2 }), fpga("b0")])), allocate(rp, "arq-1"));
    const lost = decide(held, reportOf([fpga("b0")]));
    expect(types(lost)).toContain("DeviceLost");
    expect(types(lost)).toContain("HostReportSettled");
    // Released, the lost device is removed with the release: the same report still changes nothing.
    const freed = apply(fold(lost, held), release("arq-1"));
    expect(decide(freed, reportOf([fpga("b0")]))).toEqual([]);
  });

  it("is recorded again by the next report that changes the host", () => {
    const first = apply(reported(), reportOf([fpga("af")]));
    const second = [fpga("af"), fpga("b0")];
    const events = decide(first, reportOf(second));
    expect(events.at(-1)).toMatchObject({ type: "HostReportSettled", data: { digest: reportDigest(second), unchanged: 2 } });
  });
});

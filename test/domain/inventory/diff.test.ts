/** The report diff of cyborg-reference 5.3. */
import { describe, expect, it } from "vitest";
import { attachHandleUuidFor, attributeUuidFor, controlPathUuidFor, deployableUuidFor, deviceUuidFor, rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { canonicalJson } from "../../../src/domain/shared/json.js";
import { initialHostState } from "../../../src/domain/inventory/state.js";
import { expectDomainError } from "../decider-spec.js";
import { at, bdf, decide, deployable, fold, fpga, HOST, named, pci, report, reported, types } from "./fixtures.js";

const cpid = (bus: string) => canonicalJson(pci(bus));
const devUuid = (bus: string) => deviceUuidFor(HOST, cpid(bus));
const depUuid = (bus: string, name = `${HOST}_${bdf(bus)}`) => deployableUuidFor(devUuid(bus), name);

describe("host report diff", () => {
  describe("a new device", () => {
    it("emits the whole tree: device, deployables, attributes, handles, with deterministic ids", () => {
      const { events, summary } = report(initialHostState(), [fpga("af", { handles: 2 })]);
      expect(types(events)).toEqual(["DeviceDiscovered", "DeployableAdded", "AttributeSet", "AttributeSet", "AttachHandleAdded", "AttachHandleAdded"]);
      expect(summary).toEqual({ added: 1, updated: 0, removed: 0, unchanged: 0 });
      const dev = devUuid("af");
      const dep = depUuid("af");
      expect(events[0]).toEqual({
        type: "DeviceDiscovered",
        data: {
          hostname: HOST,
          deviceUuid: dev,
          type: "FPGA",
          vendor: "0x8086",
          model: "PAC Arria10",
          stdBoardInfo: { product_id: "09c4" },
          vendorBoardInfo: null,
          controlPath: { uuid: controlPathUuidFor(HOST, cpid("af")), type: "PCI", info: pci("af") },
          status: "ENABLED",
          at,
        },
      });
      expect(events[1]!.data).toMatchObject({ deviceUuid: dev, deployableUuid: dep, parentUuid: null, rootUuid: dep, numAccelerators: 2, driverName: "intel", bitstreamId: null });
      expect(events[2]!.data).toMatchObject({ deployableUuid: dep, attributeUuid: attributeUuidFor(dep, "rc"), key: "rc", value: "FPGA" });
      expect(events[4]!.data).toMatchObject({ deployableUuid: dep, handleUuid: attachHandleUuidFor(dep, cpid("af")), handleType: "PCI", info: pci("af") });
    });
    it("gives a deployable the RP uuid3(NAMESPACE_DNS, name), as Cyborg", () => {
      expect(rpUuidFor("compute1_0000:af:00.0")).toBe("5b0dd8ca-0827-3ef3-804e-232d0228a582");
      const { events } = report(initialHostState(), [fpga("af")]);
      expect(events[1]!.data).toMatchObject({ rpUuid: "5b0dd8ca-0827-3ef3-804e-232d0228a582" });
    });
    it("adds a new device next to known ones", () => {
      const { events, summary } = report(reported([fpga("af")]), [fpga("af"), fpga("b0")]);
      expect(summary).toEqual({ added: 1, updated: 0, removed: 0, unchanged: 1 });
      expect(events[0]).toMatchObject({ type: "DeviceDiscovered", data: { deviceUuid: devUuid("b0") } });
    });
    it("adds nested deployables parent first, with parent and root uuids", () => {
      const region = { ...deployable("af"), name: named("region"), attachHandles: [] };
      const fn = { ...deployable("af"), name: named("function"), parentName: named("region") };
      const leaf = { ...deployable("af"), name: named("leaf"), parentName: named("function"), attachHandles: [] };
      const { events } = report(initialHostState(), [{ ...fpga("af"), deployables: [leaf, fn, region] }]);
      const added = events.filter((e) => e.type === "DeployableAdded").map((e) => e.data);
      const r = depUuid("af", named("region"));
      expect(added.map((d) => [d.name, d.parentUuid, d.rootUuid])).toEqual([
        [named("region"), null, r],
        [named("function"), r, r],
        [named("leaf"), depUuid("af", named("function")), r],
      ]);
    });
  });

  describe("an identical report", () => {
    it("emits nothing", () => {
      const state = reported([fpga("af", { handles: 3 }), fpga("b0")]);
      const { events, summary } = report(state, [fpga("af", { handles: 3 }), fpga("b0")]);
      expect(events).toEqual([]);
      expect(summary).toEqual({ added: 0, updated: 0, removed: 0, unchanged: 2 });
    });
    it("emits nothing when only the order of keys, devices or attributes' spelling differs", () => {
      const state = reported([fpga("af"), fpga("b0")]);
      const shuffled = {
        ...fpga("af"),
        controlPath: { type: "PCI", info: { function: "0", domain: "0000", device: "00", bus: "AF" } },
        deployables: [{ ...deployable("af"), attributes: [{ key: "rc", value: "fpga" }, { key: "trait0", value: "custom-fpga-intel" }] }],
      };
      expect(report(state, [fpga("b0"), shuffled]).events).toEqual([]);
    });
    it("an empty report on an empty host emits nothing", () => {
      expect(report(initialHostState(), [])).toEqual({ events: [], summary: { added: 0, updated: 0, removed: 0, unchanged: 0 } });
    });
  });

  it("ids are stable across reports and replays", () => {
    const a = reported([fpga("af")]);
    const b = reported([fpga("b0")], [], [fpga("af")]);
    const ids = (s: typeof a) => {
      const d = s.devices.get(devUuid("af"))!;
      const dep = [...d.deployables.values()][0]!;
      return [d.uuid, d.controlPath.uuid, dep.uuid, dep.rpUuid, [...dep.handles.keys()], [...dep.attributes.values()].map((x) => x.uuid)];
    };
    expect(ids(b)).toEqual(ids(a));
  });

  describe("device level", () => {
    it("a changed device emits DeviceChanged with only the fields that changed", () => {
      const state = reported([fpga("af")]);
      const { events, summary } = report(state, [{ ...fpga("af"), model: "PAC D5005", stdBoardInfo: { product_id: "0b2b" } }]);
      expect(events).toEqual([
        { type: "DeviceChanged", data: { hostname: HOST, deviceUuid: devUuid("af"), changes: { model: "PAC D5005", stdBoardInfo: { product_id: "0b2b" } }, at } },
      ]);
      expect(summary).toEqual({ added: 0, updated: 1, removed: 0, unchanged: 0 });
      expect(types(report(state, [{ ...fpga("af"), type: "GPU", vendor: "10de", vendorBoardInfo: { a: 1 } }]).events)).toEqual(["DeviceChanged"]);
    });
    it("a removed device is removed children first", () => {
      const state = reported([fpga("af", { handles: 2 }), fpga("b0")]);
      const { events, summary } = report(state, [fpga("b0")]);
      expect(types(events)).toEqual(["AttachHandleRemoved", "AttachHandleRemoved", "AttributeRemoved", "AttributeRemoved", "DeployableRemoved", "DeviceRemoved"]);
      expect(events.at(-1)!.data).toMatchObject({ deviceUuid: devUuid("af") });
      expect(summary).toEqual({ added: 0, updated: 0, removed: 1, unchanged: 1 });
      expect(fold(events, state).devices.size).toBe(1);
      expect(fold(events, state).deviceOfDeployable.has(depUuid("af"))).toBe(false);
    });
    it("removes nested deployables children first", () => {
      const region = { ...deployable("af"), name: named("region"), attachHandles: [] };
      const fn = { ...deployable("af"), name: named("function"), parentName: named("region") };
      const state = reported([{ ...fpga("af"), deployables: [region, fn] }]);
      const removed = report(state, []).events.filter((e) => e.type === "DeployableRemoved").map((e) => e.data.deployableUuid);
      expect(removed).toEqual([depUuid("af", named("function")), depUuid("af", named("region"))]);
    });
    it("a stub device that is known is kept as it is, even if its report differs", () => {
      const state = reported([fpga("af"), fpga("b0")]);
      const { events, summary } = report(state, [{ ...fpga("af"), stub: true, deployables: [] }, fpga("b0")]);
      expect(events).toEqual([]);
      expect(summary).toEqual({ added: 0, updated: 0, removed: 0, unchanged: 2 });
    });
    it("a stub device that is not known is not added", () => {
      const { events, summary } = report(reported([fpga("b0")]), [{ ...fpga("af"), stub: true }, fpga("b0")]);
      expect(events).toEqual([]);
      expect(summary).toEqual({ added: 0, updated: 0, removed: 0, unchanged: 1 });
    });
  });

  describe("deployable level", () => {
    const base = reported([fpga("af")]);
    it("added", () => {
      const extra = { ...deployable("af"), name: named("second"), attachHandles: [{ type: "PCI" as const, info: pci("af", "1") }] };
      const { events, summary } = report(base, [{ ...fpga("af"), deployables: [deployable("af"), extra] }]);
      expect(types(events)).toEqual(["DeployableAdded", "AttributeSet", "AttributeSet", "AttachHandleAdded"]);
      expect(summary.updated).toBe(1);
    });
    it("changed: numAccelerators and driverName", () => {
      const { events } = report(base, [{ ...fpga("af"), deployables: [{ ...deployable("af"), numAccelerators: 4, driverName: null }] }]);
      expect(events).toEqual([{ type: "DeployableChanged", data: { hostname: HOST, deployableUuid: depUuid("af"), changes: { numAccelerators: 4, driverName: null }, at } }]);
    });
    it("changed: moved under another parent", () => {
      const a = { ...deployable("af"), name: named("a"), attachHandles: [] };
      const b = { ...deployable("af"), name: named("b"), attachHandles: [] };
      const state = reported([{ ...fpga("af"), deployables: [a, b] }]);
      const { events } = report(state, [{ ...fpga("af"), deployables: [a, { ...b, parentName: named("a") }] }]);
      expect(events).toEqual([
        { type: "DeployableChanged", data: { hostname: HOST, deployableUuid: depUuid("af", named("b")), changes: { parentUuid: depUuid("af", named("a")), rootUuid: depUuid("af", named("a")) }, at } },
      ]);
    });
    it("removed", () => {
      const extra = { ...deployable("af"), name: named("second"), attachHandles: [] };
      const state = reported([{ ...fpga("af"), deployables: [deployable("af"), extra] }]);
      const { events } = report(state, [fpga("af")]);
      expect(types(events)).toEqual(["AttributeRemoved", "AttributeRemoved", "DeployableRemoved"]);
      expect(events.at(-1)!.data).toMatchObject({ deployableUuid: depUuid("af", named("second")) });
    });
    it("a deployable that moves to another device is removed before it is added (same RP)", () => {
      const moved = { ...deployable("af"), name: named("shared"), attachHandles: [] };
      const state = reported([{ ...fpga("af"), deployables: [deployable("af"), moved] }, fpga("b0")]);
      const { events } = report(state, [fpga("af"), { ...fpga("b0"), deployables: [deployable("b0"), moved] }]);
      const i = events.findIndex((e) => e.type === "DeployableRemoved");
      const j = events.findIndex((e) => e.type === "DeployableAdded");
      expect(i).toBeGreaterThanOrEqual(0);
      expect(j).toBeGreaterThan(i);
      expect(events[j]!.data).toMatchObject({ deviceUuid: devUuid("b0"), rpUuid: rpUuidFor(named("shared")) });
    });
  });

  describe("attribute level", () => {
    const base = reported([fpga("af")]);
    const withAttrs = (attributes: Array<{ key: string; value: string }>) => [{ ...fpga("af"), deployables: [{ ...deployable("af"), attributes }] }];
    it("added and changed emit AttributeSet; removed emits AttributeRemoved", () => {
      const { events } = report(base, withAttrs([{ key: "rc", value: "CUSTOM_PCI" }, { key: "trait1", value: "CUSTOM_FPGA_PRODUCT_ID_09C4" }]));
      const dep = depUuid("af");
      expect(events).toEqual([
        { type: "AttributeRemoved", data: { hostname: HOST, deployableUuid: dep, attributeUuid: attributeUuidFor(dep, "trait0"), key: "trait0", at } },
        { type: "AttributeSet", data: { hostname: HOST, deployableUuid: dep, attributeUuid: attributeUuidFor(dep, "rc"), key: "rc", value: "CUSTOM_PCI", at } },
        { type: "AttributeSet", data: { hostname: HOST, deployableUuid: dep, attributeUuid: attributeUuidFor(dep, "trait1"), key: "trait1", value: "CUSTOM_FPGA_PRODUCT_ID_09C4", at } },
      ]);
    });
  });

  describe("attach-handle level", () => {
    const base = reported([fpga("af", { handles: 2 })]);
    const withHandles = (attachHandles: Array<{ type: "PCI" | "MDEV" | "TEST_PCI"; info: Record<string, string> }>) => [
      { ...fpga("af"), deployables: [{ ...deployable("af", { handles: 2 }), attachHandles }] },
    ];
    const dep = depUuid("af");
    it("added", () => {
      const { events } = report(base, withHandles([{ type: "PCI", info: pci("af", "0") }, { type: "PCI", info: pci("af", "1") }, { type: "PCI", info: pci("af", "2") }]));
      expect(events).toEqual([
        { type: "AttachHandleAdded", data: { hostname: HOST, deviceUuid: devUuid("af"), deployableUuid: dep, handleUuid: attachHandleUuidFor(dep, cpid("af").replace('"function":"0"', '"function":"2"')), handleType: "PCI", info: pci("af", "2"), at } },
      ]);
    });
    it("type changed", () => {
      const { events } = report(base, withHandles([{ type: "PCI", info: pci("af", "0") }, { type: "TEST_PCI", info: pci("af", "1") }]));
      expect(types(events)).toEqual(["AttachHandleChanged"]);
      expect(events[0]!.data).toMatchObject({ handleType: "TEST_PCI" });
    });
    it("removed (free)", () => {
      const { events } = report(base, withHandles([{ type: "PCI", info: pci("af", "1") }]));
      expect(types(events)).toEqual(["AttachHandleRemoved"]);
    });
    it("attach_info that changes is a removal and an addition (handles are matched by attach_info)", () => {
      const { events } = report(base, withHandles([{ type: "PCI", info: pci("af", "0") }, { type: "PCI", info: { ...pci("af", "1"), physical_network: "physnet1" } }]));
      expect(types(events)).toEqual(["AttachHandleRemoved", "AttachHandleAdded"]);
    });
  });

  it("refuses a report for another host on this stream", () => {
    const state = reported([fpga("af")]);
    expectDomainError(() => decide(state, { type: "ReportHostInventory", data: { hostname: "compute2", devices: [], at } }), "BAD_USER_INPUT", "hostname");
  });
  it("refuses bad input before diffing", () => {
    expectDomainError(() => report(initialHostState(), [fpga("af"), { ...fpga("b0"), deployables: [{ ...deployable("b0"), numAccelerators: -1 }] }]), "BAD_USER_INPUT", "devices[1].deployables[0].numAccelerators");
  });
});

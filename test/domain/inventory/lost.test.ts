/** Cyborg bug 5.5 fixed: what disappears while allocated is marked lost, then removed once released. */
import { describe, expect, it } from "vitest";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { expectDomainError } from "../decider-spec.js";
import { allocate, apply, bdf, decide, deployable, fold, fpga, HOST, pci, release, report, reported, types } from "./fixtures.js";

const rp = (bus: string) => rpUuidFor(`${HOST}_${bdf(bus)}`);
const after = (state: ReturnType<typeof reported>, devices: unknown) => fold(report(state, devices).events, state);

describe("lost devices and handles", () => {
  const host = apply(apply(reported([fpga("af", { handles: 3 }), fpga("b0")]), allocate(rp("af"), "arq-1", "vm-1")), allocate(rp("af"), "arq-2", "vm-2"));
  const deviceUuid = [...host.devices.keys()][0]!;

  describe("a device that disappears while a handle is allocated", () => {
    it("is marked lost, naming the ARQs, and not removed", () => {
      const { events, summary } = report(host, [fpga("b0")]);
      expect(events).toEqual([{ type: "DeviceLost", data: { hostname: HOST, deviceUuid, arqUuids: ["arq-1", "arq-2"], at: expect.any(String) } }]);
      expect(summary).toEqual({ added: 0, updated: 0, removed: 1, unchanged: 1 });
      expect(after(host, [fpga("b0")]).devices.get(deviceUuid)!.lostArqs).toEqual(["arq-1", "arq-2"]);
    });
    it("emits nothing more while lost, whether reported again or not", () => {
      const lost = after(host, [fpga("b0")]);
      expect(report(lost, [fpga("b0")]).events).toEqual([]);
      expect(report(lost, [fpga("af", { handles: 3 }), fpga("b0")])).toEqual({ events: [], summary: { added: 0, updated: 0, removed: 0, unchanged: 2 } });
    });
    it("offers none of its handles", () => {
      const lost = apply(after(host, [fpga("b0")]), release("arq-1"));
      expectDomainError(() => decide(lost, allocate(rp("af"), "arq-3")), "CONFLICT", "deviceRpUuid", /lost/);
    });
    it("is removed, children first, when its last handle is released; a later report re-adds it with the same ids", () => {
      const lost = after(host, [fpga("b0")]);
      expect(types(decide(lost, release("arq-1")))).toEqual(["AttachHandleReleased"]);
      const one = apply(lost, release("arq-1"));
      const events = decide(one, release("arq-2"));
      expect(types(events)).toEqual([
        "AttachHandleReleased",
        "AttachHandleRemoved",
        "AttachHandleRemoved",
        "AttachHandleRemoved",
        "AttributeRemoved",
        "AttributeRemoved",
        "DeployableRemoved",
        "DeviceRemoved",
      ]);
      const gone = fold(events, one);
      expect(gone.devices.has(deviceUuid)).toBe(false);
      expect(gone.allocations.size).toBe(0);
      const back = report(gone, [fpga("af", { handles: 3 }), fpga("b0")]);
      expect(back.events[0]).toMatchObject({ type: "DeviceDiscovered", data: { deviceUuid } });
      expect(back.summary.added).toBe(1);
    });
  });

  describe("a handle that disappears while allocated", () => {
    const twoLeft = [{ ...fpga("af"), deployables: [{ ...deployable("af", { handles: 3 }), attachHandles: [{ type: "PCI" as const, info: pci("af", "1") }, { type: "PCI" as const, info: pci("af", "2") }] }] }, fpga("b0")];
    it("is marked lost, naming its ARQ; a free one that disappears is removed", () => {
      const { events } = report(host, twoLeft);
      expect(types(events)).toEqual(["AttachHandleLost"]);
      expect(events[0]!.data).toMatchObject({ arqUuid: "arq-1" });
      const noneLeft = [{ ...fpga("af"), deployables: [{ ...deployable("af", { handles: 3 }), attachHandles: [] }] }, fpga("b0")];
      expect(types(report(host, noneLeft).events)).toEqual(["AttachHandleLost", "AttachHandleLost", "AttachHandleRemoved"]);
    });
    it("stays lost if it comes back, and is never offered again", () => {
      const lost = after(host, twoLeft);
      expect(report(lost, [fpga("af", { handles: 3 }), fpga("b0")]).events).toEqual([]);
      const handle = lost.allocations.get("arq-1")!.handleUuid;
      const freed = apply(after(lost, twoLeft), release("arq-2"));
      expect(decide(freed, allocate(rp("af"), "arq-3"))[0]!.data).toMatchObject({ info: pci("af", "1") });
      expect(decide(freed, allocate(rp("af"), "arq-3"))[0]!.data).not.toMatchObject({ handleUuid: handle });
    });
    it("is removed when released; the next report adds it again with the same id", () => {
      const lost = after(host, twoLeft);
      const handle = lost.allocations.get("arq-1")!.handleUuid;
      const events = decide(lost, release("arq-1"));
      expect(types(events)).toEqual(["AttachHandleReleased", "AttachHandleRemoved"]);
      const gone = fold(events, lost);
      const back = report(gone, [fpga("af", { handles: 3 }), fpga("b0")]).events;
      expect(back).toMatchObject([{ type: "AttachHandleAdded", data: { handleUuid: handle, info: pci("af", "0") } }]);
    });
  });

  describe("a deployable that disappears while a handle of it is allocated", () => {
    const single = apply(reported([fpga("af", { handles: 2 })]), allocate(rp("af"), "arq-1"));
    const without = [{ ...fpga("af"), deployables: [] }];
    it("loses its allocated handles, removes its free ones, and stays with its attributes", () => {
      const { events } = report(single, without);
      expect(types(events)).toEqual(["AttachHandleLost", "AttachHandleRemoved"]);
      const dep = [...after(single, without).devices.values()][0]!.deployables;
      expect(dep.size).toBe(1);
      expect([...dep.values()][0]!.attributes.size).toBe(2);
    });
    it("is removed by the first report after the release", () => {
      const lost = after(single, without);
      const released = apply(lost, release("arq-1"));
      expect([...released.devices.values()][0]!.deployables.size).toBe(1);
      expect(types(report(released, without).events)).toEqual(["AttributeRemoved", "AttributeRemoved", "DeployableRemoved"]);
    });
  });
});

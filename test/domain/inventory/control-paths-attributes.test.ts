/** Several control paths per device and nested attributes (the database-model spec), through the report diff. */
import { describe, expect, it } from "vitest";
import type { InventoryEvent } from "../../../src/domain/inventory/events.js";
import { attributeUuidFor, controlPathUuidFor, deployableUuidFor, deviceUuidFor } from "../../../src/domain/inventory/ids.js";
import { initialHostState } from "../../../src/domain/inventory/state.js";
import { canonicalJson } from "../../../src/domain/shared/json.js";
import { at, bdf, deployable, fold, fpga, HOST, pci, report, reported, types } from "./fixtures.js";

const cpid = (bus: string, fn = "0") => canonicalJson(pci(bus, fn));
const devUuid = deviceUuidFor(HOST, cpid("d8"));
const depUuid = deployableUuidFor(devUuid, `${HOST}_${bdf("d8")}`);
const userPf = { type: "PCI", info: pci("d8", "1") };
/** A Xilinx-like card: management PF d8:00.0 (its identity) and user PF d8:00.1. */
const card = (extra = [userPf]) => fpga("d8", { additionalControlPaths: extra });

describe("several control paths per device", () => {
  it("a new device records every control path, each with its own deterministic uuid", () => {
    const { events } = report(initialHostState(), [card()]);
    expect(events[0]!.data).toMatchObject({
      controlPath: { uuid: controlPathUuidFor(HOST, cpid("d8")), type: "PCI", info: pci("d8") },
      additionalControlPaths: [{ uuid: controlPathUuidFor(HOST, cpid("d8", "1")), type: "PCI", info: pci("d8", "1") }],
    });
    const device = fold(events).devices.get(devUuid)!;
    expect(device.additionalControlPaths.map((c) => c.info)).toEqual([pci("d8", "1")]);
  });
  it("the same report again changes nothing; a changed list is one DeviceChanged with the whole new list", () => {
    const state = reported([card()]);
    expect(report(state, [card()]).events).toEqual([]);
    const third = { type: "PCI", info: pci("d8", "2") };
    const { events, summary } = report(state, [card([userPf, third])]);
    expect(summary).toMatchObject({ updated: 1 });
    expect(events).toEqual([
      {
        type: "DeviceChanged",
        data: { hostname: HOST, deviceUuid: devUuid, changes: { additionalControlPaths: [expect.objectContaining({ info: pci("d8", "1") }), expect.objectContaining({ info: pci("d8", "2") })] }, at },
      },
    ]);
    expect(fold(events, state).devices.get(devUuid)!.additionalControlPaths).toHaveLength(2);
    const back = report(fold(events, state), [fpga("d8")]).events;
    expect(back).toEqual([{ type: "DeviceChanged", data: { hostname: HOST, deviceUuid: devUuid, changes: { additionalControlPaths: [] }, at } }]);
  });
  it("a device is still matched by its first control path alone", () => {
    const { summary } = report(reported([card()]), [card([{ type: "PCI", info: pci("d8", "3") }])]);
    expect(summary).toEqual({ added: 0, updated: 1, removed: 0, unchanged: 0 });
  });
  it("a device discovered by an event written before devices could have several control paths reads with none", () => {
    const old = report(initialHostState(), [fpga("d8")]).events;
    const data = old[0]!.data as Record<string, unknown>;
    expect("additionalControlPaths" in data).toBe(false);
    const state = fold(old);
    expect(state.devices.get(devUuid)!.additionalControlPaths).toEqual([]);
    expect(report(state, [fpga("d8")]).events).toEqual([]);
  });
  it("an HPTS card is reported like any device", () => {
    const { events } = report(initialHostState(), [{ ...fpga("d8"), type: "HPTS", deployables: [{ ...deployable("d8"), attributes: [{ key: "rc", value: "CUSTOM_HPTS" }] }] }]);
    expect(events[0]!.data).toMatchObject({ type: "HPTS" });
    expect(fold(events).devices.get(devUuid)!.type).toBe("HPTS");
  });
});

describe("nested attributes (parent_attribute_id)", () => {
  const attrs = (kpiParent: string | null) => [
    { key: "rc", value: "FPGA" },
    { key: "bitstream", value: "nlb0" },
    { key: "region", value: "r0" },
    { key: "kpi", value: "10", parentKey: kpiParent },
  ];
  const withAttrs = (kpiParent: string | null) => fpga("d8", { deployables: [{ ...deployable("d8"), attributes: attrs(kpiParent) }] });
  const set = (events: readonly InventoryEvent[], key: string) => events.find((e) => e.type === "AttributeSet" && e.data.key === key)!.data;

  it("records the parent's uuid on the nested attribute, and none on the top ones", () => {
    const { events } = report(initialHostState(), [withAttrs("bitstream")]);
    expect(set(events, "kpi")).toMatchObject({ key: "kpi", value: "10", parentAttributeUuid: attributeUuidFor(depUuid, "bitstream") });
    expect("parentAttributeUuid" in set(events, "bitstream")).toBe(false);
    const tree = fold(events).devices.get(devUuid)!.deployables.get(depUuid)!;
    expect(tree.attributes.get("kpi")).toEqual({ uuid: attributeUuidFor(depUuid, "kpi"), value: "10", parentUuid: attributeUuidFor(depUuid, "bitstream") });
    expect(tree.attributes.get("bitstream")!.parentUuid).toBeNull();
  });
  it("moving an attribute under another parent sets it again; the same report changes nothing", () => {
    const state = reported([withAttrs("bitstream")]);
    expect(report(state, [withAttrs("bitstream")]).events).toEqual([]);
    const { events } = report(state, [withAttrs("region")]);
    expect(types(events)).toEqual(["AttributeSet"]);
    expect(events[0]!.data).toMatchObject({ key: "kpi", parentAttributeUuid: attributeUuidFor(depUuid, "region") });
    const top = report(fold(events, state), [withAttrs(null)]).events;
    expect(top).toHaveLength(1);
    expect(fold(top, fold(events, state)).devices.get(devUuid)!.deployables.get(depUuid)!.attributes.get("kpi")!.parentUuid).toBeNull();
  });
});

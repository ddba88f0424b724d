import { describe, expect, it } from "vitest";
import { validateHostname, validateReport } from "../../../src/domain/inventory/report-validation.js";
import { expectDomainError } from "../decider-spec.js";
import { deployable, fpga, pci } from "./fixtures.js";

const rejects = (devices: unknown, field: string, message?: RegExp | string) => expectDomainError(() => validateReport(devices), "BAD_USER_INPUT", field, message);
/** One FPGA with its fields overridden. */
const dev = (over: Record<string, unknown>) => ({ ...fpga("af"), ...over });
const dep = (over: Record<string, unknown>) => dev({ deployables: [{ ...deployable("af"), ...over }] });
const pciPath = (info: Record<string, string>) => ({ type: "PCI", info });

describe("host report validation", () => {
  it("accepts a well-formed report and normalises it", () => {
    const [d] = validateReport([
      dev({
        controlPath: { type: "PCI", info: { domain: "0000", bus: "AF", device: "0x00", function: "0" } },
        deployables: [{ ...deployable("af"), attributes: [{ key: "rc", value: "fpga" }, { key: "trait0", value: "custom fpga-intel" }, { key: "model", value: "x y" }] }],
      }),
    ]);
    expect(d!.controlPath.info).toEqual(pci("af"));
    expect(d!.cpidKey).toBe('{"bus":"af","device":"00","domain":"0000","function":"0"}');
    expect(d!.deployables[0]!.attributes).toEqual([
      { key: "rc", value: "FPGA", parentKey: null },
      { key: "trait0", value: "CUSTOM_FPGA_INTEL", parentKey: null },
      { key: "model", value: "x y", parentKey: null },
    ]);
    expect(d!.additionalControlPaths).toEqual([]);
    expect(validateReport([])).toEqual([]);
  });

  it("refuses a report that is not a list, or a device that is not an object", () => {
    rejects({}, "devices");
    rejects([null], "devices[0]");
  });
  it("refuses an unknown device type", () => {
    rejects([fpga("af"), dev({ type: "TPU", controlPath: { type: "PCI", info: pci("b0") } })], "devices[1].type", /unknown device type "TPU"/);
  });
  it("refuses bad vendor/model and board info that is not a JSON object", () => {
    rejects([dev({ vendor: 8086 })], "devices[0].vendor");
    rejects([dev({ model: undefined })], "devices[0].model");
    rejects([dev({ stdBoardInfo: "x" })], "devices[0].stdBoardInfo");
    rejects([dev({ vendorBoardInfo: [1] })], "devices[0].vendorBoardInfo");
    rejects([dev({ stdBoardInfo: { n: Number.NaN } })], "devices[0].stdBoardInfo");
    rejects([dev({ stub: "yes" })], "devices[0].stub");
  });
  it("refuses a control path that is not PCI or not a PCI address", () => {
    rejects([dev({ controlPath: { type: "USB", info: pci("af") } })], "devices[0].controlPath.type");
    rejects([dev({ controlPath: { type: "PCI", info: "0000:af:00.0" } })], "devices[0].controlPath.info");
    rejects([dev({ controlPath: { type: "PCI", info: { ...pci("af"), bus: "zz" } } })], "devices[0].controlPath.info.bus");
    rejects([dev({ controlPath: { type: "PCI", info: { ...pci("af"), bus: "1af" } } })], "devices[0].controlPath.info.bus");
    rejects([dev({ controlPath: { type: "PCI", info: { ...pci("af"), device: "20" } } })], "devices[0].controlPath.info.device");
    rejects([dev({ controlPath: { type: "PCI", info: { ...pci("af"), function: "8" } } })], "devices[0].controlPath.info.function");
    rejects([dev({ controlPath: { type: "PCI", info: { bus: "af", device: "00", function: "0" } } })], "devices[0].controlPath.info.domain");
    rejects([dev({ controlPath: undefined })], "devices[0].controlPath");
  });
  it("refuses two devices with one control path", () => {
    const twin = { ...fpga("af"), deployables: [deployable("b0")] };
    rejects([fpga("af"), twin], "devices[1].controlPath.info", /devices\[0\]/);
  });
  it("refuses duplicate deployable names, within a device or across the host", () => {
    rejects([dev({ deployables: [deployable("af"), { ...deployable("af"), attachHandles: [] }] })], "devices[0].deployables[1].name");
    rejects([fpga("af"), { ...fpga("b0"), deployables: [{ ...deployable("af"), attachHandles: [] }] }], "devices[1].deployables[0].name", /devices\[0\]\.deployables\[0\]/);
  });
  it("refuses a bad deployable name, driver name or count", () => {
    rejects([dep({ name: "" })], "devices[0].deployables[0].name");
    rejects([dep({ name: "x".repeat(256) })], "devices[0].deployables[0].name");
    rejects([dep({ driverName: 3 })], "devices[0].deployables[0].driverName");
    rejects([dep({ numAccelerators: -1 })], "devices[0].deployables[0].numAccelerators", /integer >= 0/);
    rejects([dep({ numAccelerators: 1.5 })], "devices[0].deployables[0].numAccelerators");
    rejects([dep({ numAccelerators: "1" })], "devices[0].deployables[0].numAccelerators");
    rejects([dep({ attributes: null })], "devices[0].deployables[0].attributes");
    rejects([dep({ attachHandles: {} })], "devices[0].deployables[0].attachHandles");
    rejects([dev({ deployables: "x" })], "devices[0].deployables");
  });
  it("accepts zero accelerators", () => {
    expect(validateReport([dep({ numAccelerators: 0 })])[0]!.deployables[0]!.numAccelerators).toBe(0);
  });
  it("refuses a parent that does not exist on the device, or a cycle", () => {
    rejects([dep({ parentName: "nope" })], "devices[0].deployables[0].parentName");
    const a = { ...deployable("af"), name: "a", parentName: "b", attachHandles: [] };
    const b = { ...deployable("af"), name: "b", parentName: "a", attachHandles: [] };
    rejects([dev({ deployables: [a, b] })], "devices[0].deployables[0].parentName", /own ancestor/);
  });
  it("orders parents first, reporting errors at their report index", () => {
    const child = { ...deployable("af"), name: "child", parentName: "parent", attachHandles: [{ type: "PCI", info: pci("af", "1") }] };
    const parent = { ...deployable("af"), name: "parent" };
    expect(validateReport([dev({ deployables: [child, parent] })])[0]!.deployables.map((d) => [d.name, d.index])).toEqual([
      ["parent", 1],
      ["child", 0],
    ]);
    rejects([dev({ deployables: [child, { ...parent, numAccelerators: -2 }] })], "devices[0].deployables[1].numAccelerators");
  });
  it("refuses bad attributes: trait values outside the trait syntax, bad rc, duplicate keys", () => {
    const attrs = (attributes: unknown) => dep({ attributes });
    rejects([attrs([{ key: "rc", value: "FPGA" }, { key: "trait0", value: "CUSTOM_A.B" }])], "devices[0].deployables[0].attributes[1].value", /not a trait/);
    rejects([attrs([{ key: "traits1", value: "1abc" }])], "devices[0].deployables[0].attributes[0].value");
    rejects([attrs([{ key: "rc", value: "VCPU" }])], "devices[0].deployables[0].attributes[0].value", /resource class/);
    rejects([attrs([{ key: "rc", value: "FPGA" }, { key: "rc", value: "FPGA" }])], "devices[0].deployables[0].attributes[1].key", /duplicate/);
    rejects([attrs([{ key: "", value: "x" }])], "devices[0].deployables[0].attributes[0].key");
    rejects([attrs([{ key: "x", value: 1 }])], "devices[0].deployables[0].attributes[0].value");
    rejects([attrs(["rc=FPGA"])], "devices[0].deployables[0].attributes[0]");
  });
  it("accepts standard traits such as OWNER_CYBORG", () => {
    const [d] = validateReport([dep({ attributes: [{ key: "trait0", value: "OWNER_CYBORG" }] })]);
    expect(d!.deployables[0]!.attributes).toEqual([{ key: "trait0", value: "OWNER_CYBORG", parentKey: null }]);
  });
  it("accepts the HPTS device type of the agent-driver spec", () => {
    expect(validateReport([dev({ type: "HPTS" })])[0]!.type).toBe("HPTS");
  });
  it("accepts several control paths per device, normalised, each the device's alone", () => {
    const [d] = validateReport([dev({ additionalControlPaths: [{ type: "PCI", info: { domain: "0000", bus: "AF", device: "00", function: "1" } }] })]);
    expect(d!.additionalControlPaths).toEqual([{ type: "PCI", info: { ...pci("af"), function: "1" }, key: '{"bus":"af","device":"00","domain":"0000","function":"1"}' }]);
    const second = { type: "PCI", info: { ...pci("af"), function: "1" } };
    rejects([dev({ additionalControlPaths: [pciPath(pci("af"))] })], "devices[0].additionalControlPaths[0].info", /devices\[0\] has the same control path/);
    rejects([dev({ additionalControlPaths: [second, second] })], "devices[0].additionalControlPaths[1].info");
    rejects([dev({ additionalControlPaths: [second] }), dev({ controlPath: second, deployables: [] })], "devices[1].controlPath.info", /devices\[0\] has the same control path/);
    rejects([dev({ additionalControlPaths: [{ type: "USB", info: {} }] })], "devices[0].additionalControlPaths[0].type", /expected PCI/);
    rejects([dev({ additionalControlPaths: "0000:af:00.1" })], "devices[0].additionalControlPaths");
    rejects([dev({ additionalControlPaths: Array.from({ length: 32 }, (_, f) => pciPath({ ...pci("b0"), device: String(f).padStart(2, "0") })) })], "devices[0].additionalControlPaths", /at most 32/);
  });
  it("accepts nested attributes: a parentKey names another attribute of the deployable, never a cycle, never rc or trait*", () => {
    const nested = [{ key: "bitstream", value: "nlb0" }, { key: "kpi", value: "10", parentKey: "bitstream" }, { key: "kpi.unit", value: "Gbps", parentKey: "kpi" }];
    const [d] = validateReport([dep({ attributes: nested })]);
    expect(d!.deployables[0]!.attributes.map((a) => [a.key, a.parentKey])).toEqual([["bitstream", null], ["kpi", "bitstream"], ["kpi.unit", "kpi"]]);
    rejects([dep({ attributes: [{ key: "kpi", value: "1", parentKey: "nope" }] })], "devices[0].deployables[0].attributes[0].parentKey", /no attribute with key nope/);
    rejects([dep({ attributes: [{ key: "a", value: "1", parentKey: "b" }, { key: "b", value: "2", parentKey: "a" }] })], "devices[0].deployables[0].attributes[0].parentKey", /its own ancestor/);
    rejects([dep({ attributes: [{ key: "a", value: "1" }, { key: "trait0", value: "CUSTOM_X", parentKey: "a" }] })], "devices[0].deployables[0].attributes[1].parentKey", /cannot be nested/);
    rejects([dep({ attributes: [{ key: "a", value: "1", parentKey: 3 }] })], "devices[0].deployables[0].attributes[0].parentKey");
  });
  it("refuses bad attach handles: type, non-JSON-object info, bad PCI address, duplicates on the host", () => {
    const handles = (attachHandles: unknown) => dep({ attachHandles });
    rejects([handles([{ type: "USB", info: pci("af") }])], "devices[0].deployables[0].attachHandles[0].type");
    rejects([handles([{ type: "PCI", info: '{"bus":"af"}' }])], "devices[0].deployables[0].attachHandles[0].info", /JSON object/);
    rejects([handles([{ type: "PCI", info: [pci("af")] }])], "devices[0].deployables[0].attachHandles[0].info");
    rejects([handles([{ type: "MDEV", info: { ...pci("af"), bus: "g1" } }])], "devices[0].deployables[0].attachHandles[0].info.bus");
    rejects([handles([{ type: "PCI", info: pci("af") }, { type: "MDEV", info: { bus: "AF", device: "00", domain: "0000", function: "0" } }])], "devices[0].deployables[0].attachHandles[1].info", /already reported/);
    rejects([fpga("af"), { ...fpga("b0"), deployables: [{ ...deployable("b0"), attachHandles: [{ type: "PCI", info: pci("af") }] }] }], "devices[1].deployables[0].attachHandles[0].info");
  });
  it("keeps extra attach_info keys (physical_network, asked_type, vgpu_mark) and TEST_PCI info as given", () => {
    const info = { ...pci("af"), physical_network: "physnet1" };
    const [d] = validateReport([dep({ attachHandles: [{ type: "PCI", info }, { type: "TEST_PCI", info: { any: "thing" } }] })]);
    expect(d!.deployables[0]!.handles.map((h) => h.info)).toEqual([info, { any: "thing" }]);
  });
  it("takes the report's structure as class instances (GraphQL input objects) and copies what it keeps", () => {
    class Input {}
    // As type-graphql builds input objects: an instance per level; JSON scalar values stay plain.
    const asInputs = (v: unknown, json = false): unknown => {
      if (Array.isArray(v)) return v.map((x) => asInputs(x));
      if (json || v === null || typeof v !== "object") return v;
      return Object.assign(new Input(), Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asInputs(x, ["info", "stdBoardInfo", "vendorBoardInfo"].includes(k))])));
    };
    const plain = [fpga("af", { handles: 2 }), { ...fpga("b0"), stub: true }];
    const inputs = asInputs(plain) as Array<{ controlPath: { info: object }; deployables: Array<{ attachHandles: Array<{ info: object }> }> }>;
    expect(Object.getPrototypeOf(inputs[0]!.controlPath)).toBe(Input.prototype);
    const validated = validateReport(inputs);
    expect(validated).toEqual(validateReport(plain));
    expect(validated[0]!.controlPath.info).not.toBe(inputs[0]!.controlPath.info);
    expect(validated[0]!.deployables[0]!.handles[0]!.info).not.toBe(inputs[0]!.deployables[0]!.attachHandles[0]!.info);
    // JSON-valued fields must still be plain JSON.
    rejects([dev({ stdBoardInfo: Object.assign(new Input(), { product_id: "09c4" }) })], "devices[0].stdBoardInfo");
    rejects([dep({ attachHandles: [{ type: "PCI", info: Object.assign(new Input(), pci("af")) }] })], "devices[0].deployables[0].attachHandles[0].info");
  });
  it("validates hostnames", () => {
    expect(validateHostname("compute-1.example.org")).toBe("compute-1.example.org");
    for (const h of ["", "a b", "-x", "x".repeat(256), 3]) expectDomainError(() => validateHostname(h), "BAD_USER_INPUT", "hostname");
  });
});

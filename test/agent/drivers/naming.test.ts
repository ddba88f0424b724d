import { describe, expect, it } from "vitest";
import { attributeList, customTrait, deployableName, hexId, normalizeTraitPart, pciAddress, sanitizeRpName } from "../../../src/clients/agent/drivers/naming.js";

describe("driver naming helpers", () => {
  it("normalises trait parts: upper case, spaces and hyphens to _, other chars dropped", () => {
    expect(normalizeTraitPart("T4-2B")).toBe("T4_2B");
    expect(normalizeTraitPart(" pac arria10 ")).toBe("PAC_ARRIA10");
    expect(normalizeTraitPart("850adcc2-6ceb-4b22-9722-d43375b61c66")).toBe("850ADCC2_6CEB_4B22_9722_D43375B61C66");
    expect(normalizeTraitPart("a.b/c(d)")).toBe("ABCD");
    expect(normalizeTraitPart("PAC (Arria 10) -")).toBe("PAC_ARRIA_10");
  });

  it("builds CUSTOM_ traits from parts without doubling the prefix or keeping empty parts", () => {
    expect(customTrait("GPU", "NVIDIA", "1eb8")).toBe("CUSTOM_GPU_NVIDIA_1EB8");
    expect(customTrait("CUSTOM_GPU_NVIDIA_1EB8", "T4-2B")).toBe("CUSTOM_GPU_NVIDIA_1EB8_T4_2B");
    expect(customTrait("FPGA", "", "XILINX", "5004")).toBe("CUSTOM_FPGA_XILINX_5004");
  });

  it("turns a BDF into Cyborg's pci_str_to_json fields, lower-case, no 0x", () => {
    expect(pciAddress("0000:AF:00.0")).toEqual({ domain: "0000", bus: "af", device: "00", function: "0" });
    expect(() => pciAddress("af:00.0")).toThrow(/not a PCI address/);
    expect(() => pciAddress("0000:af:00.8")).toThrow(/not a PCI address/);
  });

  it("names deployables <host>_<BDF>; the fake driver's names are sanitised", () => {
    expect(deployableName("compute1", "0000:af:00.0")).toBe("compute1_0000:af:00.0");
    expect(sanitizeRpName("compute-1.example.org_FakeDevice")).toBe("compute-1_example_org_FakeDevice");
  });

  it("lists rc first, then trait0.. in order, without duplicates", () => {
    expect(attributeList("FPGA", ["A", "B", "A"])).toEqual([
      { key: "rc", value: "FPGA" },
      { key: "trait0", value: "A" },
      { key: "trait1", value: "B" },
    ]);
    expect(attributeList(null, ["A"])).toEqual([{ key: "trait0", value: "A" }]);
  });

  it("reads sysfs and lspci ids alike", () => {
    expect(hexId("0x8086\n")).toBe("8086");
    expect(hexId("10DE")).toBe("10de");
    expect(hexId("garbage")).toBeNull();
    expect(hexId(null)).toBeNull();
  });
});

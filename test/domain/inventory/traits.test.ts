import { describe, expect, it } from "vitest";
import {
  OWNER_CYBORG,
  customTrait,
  deviceTypeTrait,
  functionIdTrait,
  isCustomTrait,
  isValidResourceClass,
  isValidTrait,
  normalizeTraitName,
  deviceTraits,
  isFunctionTrait,
  isFunctionTraitFor,
  isRegionTrait,
  isRegionTraitFor,
  regionTrait,
  resourceClassFor,
} from "../../../src/domain/shared/traits.js";
import { expectDomainError } from "../decider-spec.js";

describe("trait and resource-class naming", () => {
  it("normalises per the spec: upper-case, spaces and hyphens to underscores", () => {
    expect(normalizeTraitName("  custom fpga-intel  ")).toBe("CUSTOM_FPGA_INTEL");
    expect(normalizeTraitName("Custom_A - b")).toBe("CUSTOM_A_B");
  });
  it("tells custom traits from standard ones", () => {
    expect(isCustomTrait("CUSTOM_FPGA_INTEL")).toBe(true);
    expect(isCustomTrait("OWNER_CYBORG")).toBe(false);
    expect(isValidTrait(OWNER_CYBORG)).toBe(true);
    expect(isValidTrait("CUSTOM_A.B")).toBe(false);
    expect(isValidTrait("custom_a")).toBe(false);
    expect(isValidTrait(`CUSTOM_${"X".repeat(250)}`)).toBe(false);
  });
  it("customTrait builds CUSTOM_<PART>_..., without doubling CUSTOM_, dropping what a trait cannot hold", () => {
    expect(customTrait("FPGA", "Intel", "PAC Arria10")).toBe("CUSTOM_FPGA_INTEL_PAC_ARRIA10");
    expect(customTrait("CUSTOM_FOO")).toBe("CUSTOM_FOO");
    expect(customTrait("PCI", "Xilinx Corp.")).toBe("CUSTOM_PCI_XILINX_CORP");
    expect(customTrait("a", "", "b")).toBe("CUSTOM_A_B");
    expectDomainError(() => customTrait("!!!"), "BAD_USER_INPUT", "trait");
    expectDomainError(() => customTrait(), "BAD_USER_INPUT", "trait");
  });

  describe("the agent-driver spec's patterns, one for every driver", () => {
    it("device type: CUSTOM_<TYPE>_<VENDOR>_<PRODUCT>, with the vendor's alone before it", () => {
      expect(deviceTraits("GPU", "NVIDIA", "1eb8")).toEqual(["CUSTOM_GPU_NVIDIA", "CUSTOM_GPU_NVIDIA_1EB8"]);
      expect(deviceTraits("QAT", "Intel", "37c8")).toEqual(["CUSTOM_QAT_INTEL", "CUSTOM_QAT_INTEL_37C8"]);
      expect(deviceTraits("HPTS", "facebook", "0400")).toEqual(["CUSTOM_HPTS_FACEBOOK", "CUSTOM_HPTS_FACEBOOK_0400"]);
      expect(deviceTraits("PCI", "mellanox", "1017")).toEqual(["CUSTOM_PCI_MELLANOX", "CUSTOM_PCI_MELLANOX_1017"]);
    });
    it("region and function: CUSTOM_<TYPE>_<VENDOR>_REGION_<ID> and ..._FUNCTION_<ID>, uuids upper-cased with underscores", () => {
      expect(regionTrait("fake", "t1")).toBe("CUSTOM_FPGA_FAKE_REGION_T1");
      expect(functionIdTrait("XILINX", "ab-cd")).toBe("CUSTOM_FPGA_XILINX_FUNCTION_AB_CD");
      expect(isRegionTrait("CUSTOM_FPGA_INTEL_REGION_AB")).toBe(true);
      expect(isFunctionTrait("CUSTOM_FPGA_INTEL_FUNCTION_AB")).toBe(true);
      expect(isFunctionTrait("CUSTOM_FPGA_INTEL_PAC_ARRIA10")).toBe(false);
      expect(isRegionTrait("CUSTOM_FPGA_INTEL_FUNCTION_AB")).toBe(false);
      expect(isRegionTraitFor("CUSTOM_FPGA_INTEL_REGION_9926AB6D_6C92", "9926ab6d-6c92")).toBe(true);
      expect(isRegionTraitFor("CUSTOM_FPGA_INTEL_REGION_X9926AB6D_6C92", "9926ab6d-6c92")).toBe(false);
      expect(isFunctionTraitFor("CUSTOM_FPGA_FAKE_FUNCTION_F1", "f1")).toBe(true);
      expect(isFunctionTraitFor("CUSTOM_FPGA_FAKE_FUNCTION_F1", "f2")).toBe(false);
      // The name drivers reported before, as stored in older events: CUSTOM_FPGA_FUNCTION_ID_<DRIVER>_<ID>.
      expect(isFunctionTraitFor("CUSTOM_FPGA_FUNCTION_ID_INTEL_FA", "fa")).toBe(true);
      expect(isFunctionTraitFor("CUSTOM_FPGA_FUNCTION_ID_INTEL_FA", "a")).toBe(false);
      expect(isFunctionTraitFor("CUSTOM_FPGA_FUNCTION_ID_FA", "fa")).toBe(false);
    });
    it("still recognises the region and function traits drivers reported before (old events)", () => {
      expect(isRegionTraitFor("CUSTOM_FPGA_REGION_INTEL_AB", "ab")).toBe(false);
      expect(isRegionTrait("CUSTOM_FPGA_REGION_INTEL_AB")).toBe(true);
      expect(isFunctionTrait("CUSTOM_FPGA_FUNCTION_ID_INTEL_AB")).toBe(true);
    });
  });

  describe("each driver family (cyborg-reference 5.6)", () => {
    it("fake driver", () => {
      expect(customTrait("FAKE_DEVICE")).toBe("CUSTOM_FAKE_DEVICE");
      expect(resourceClassFor("FPGA")).toBe("FPGA");
    });
    it("NVIDIA GPU: pGPU and vGPU", () => {
      expect(deviceTypeTrait("GPU", "NVIDIA", "1eb8")).toBe("CUSTOM_GPU_NVIDIA_1EB8");
      expect(customTrait("CUSTOM_GPU_NVIDIA_1EB8", "T4-2B")).toBe("CUSTOM_GPU_NVIDIA_1EB8_T4_2B");
      expect(resourceClassFor("GPU")).toBe("PGPU");
      expect(resourceClassFor("GPU", { mdev: true })).toBe("VGPU");
    });
    it("Intel FPGA: device, family, region and function traits", () => {
      expect(deviceTypeTrait("FPGA", "intel")).toBe("CUSTOM_FPGA_INTEL");
      expect(deviceTypeTrait("FPGA", "Intel", "PAC Arria10")).toBe("CUSTOM_FPGA_INTEL_PAC_ARRIA10");
      expect(regionTrait("intel", "9926ab6d-6c92-5a68-aabc-a7d84c545738")).toBe("CUSTOM_FPGA_INTEL_REGION_9926AB6D_6C92_5A68_AABC_A7D84C545738");
      expect(functionIdTrait("intel", "d8424dc4-a4a3-c413-f89e-433683f9040b")).toBe("CUSTOM_FPGA_INTEL_FUNCTION_D8424DC4_A4A3_C413_F89E_433683F9040B");
    });
    it("Inspur FPGA and Xilinx FPGA", () => {
      expect(deviceTypeTrait("FPGA", "INSPUR")).toBe("CUSTOM_FPGA_INSPUR");
      expect(deviceTypeTrait("FPGA", "INSPUR", "a1b2")).toBe("CUSTOM_FPGA_INSPUR_A1B2");
      expect(deviceTypeTrait("FPGA", "xilinx")).toBe("CUSTOM_FPGA_XILINX");
      expect(deviceTypeTrait("FPGA", "xilinx", "5000")).toBe("CUSTOM_FPGA_XILINX_5000");
    });
    it("Intel QAT and HPTS cards: CUSTOM_<TYPE> resource classes", () => {
      expect(resourceClassFor("QAT")).toBe("CUSTOM_QAT");
      expect(resourceClassFor("HPTS")).toBe("CUSTOM_HPTS");
    });
    it("Intel NIC: PF/VF, function and physnet traits", () => {
      expect(customTrait("PF")).toBe("CUSTOM_PF");
      expect(customTrait("VF")).toBe("CUSTOM_VF");
      expect(customTrait("physnet-1")).toBe("CUSTOM_PHYSNET_1");
      expect(resourceClassFor("NIC")).toBe("CUSTOM_NIC");
    });
    it("Inspur NVMe SSD", () => {
      expect(deviceTypeTrait("SSD", "inspur")).toBe("CUSTOM_SSD_INSPUR");
      expect(deviceTypeTrait("SSD", "inspur", "1001")).toBe("CUSTOM_SSD_INSPUR_1001");
      expect(resourceClassFor("SSD")).toBe("CUSTOM_SSD");
    });
    it("generic PCI: OWNER_CYBORG, vendor and product traits, CUSTOM_PCI", () => {
      expect(isValidTrait(OWNER_CYBORG)).toBe(true);
      expect(customTrait("PCI", "Intel")).toBe("CUSTOM_PCI_INTEL");
      expect(deviceTypeTrait("PCI", "Intel", "37c8")).toBe("CUSTOM_PCI_INTEL_37C8");
      expect(resourceClassFor("PCI")).toBe("CUSTOM_PCI");
    });
    it("Huawei Ascend AI chip", () => {
      expect(resourceClassFor("AICHIP")).toBe("CUSTOM_AICHIP");
    });
  });

  it("resource classes: standard ones and CUSTOM_*", () => {
    for (const rc of ["FPGA", "PGPU", "VGPU", "GPU", "CUSTOM_QAT", "CUSTOM_PCI", "CUSTOM_AICHIP"]) expect(isValidResourceClass(rc)).toBe(true);
    for (const rc of ["VCPU", "fpga", "CUSTOM_"]) expect(isValidResourceClass(rc)).toBe(false);
  });
});

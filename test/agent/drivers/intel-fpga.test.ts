import { describe, expect, it } from "vitest";
import { intelFpgaDriver } from "../../../src/clients/agent/drivers/intel-fpga.js";
import { fixtureEnv, pci } from "./fixture-env.js";

const REGION = "CUSTOM_FPGA_INTEL_REGION_9926AB6D6C925A68AABCA7D84C545738";
const NLB0 = "CUSTOM_FPGA_INTEL_FUNCTION_D8424DC4A4A3C413F89E433683F9040B";

describe("intel-fpga driver on the mixed host (PAC Arria 10 with SR-IOV on)", () => {
  it("reports the PAC as a device deployable with a region deployable nested under it", async () => {
    const env = fixtureEnv("mixed-host");
    const devices = await intelFpgaDriver.discover(env);
    expect(devices).toEqual([
      {
        type: "FPGA",
        vendor: "0x8086",
        model: "Intel PAC Arria 10 GX",
        stdBoardInfo: { product_id: "0x09c4" },
        vendorBoardInfo: null,
        controlPath: { type: "PCI", info: pci("0000:5e:00.0") },
        stub: false,
        deployables: [
          {
            name: "compute1_0000:5e:00.0",
            numAccelerators: 0,
            driverName: "intel",
            attributes: [
              { key: "trait0", value: "CUSTOM_FPGA_INTEL" },
              { key: "trait1", value: "CUSTOM_FPGA_INTEL_PAC_ARRIA10" },
            ],
            attachHandles: [],
          },
          {
            name: "compute1_0000:5e:00.0_region0",
            parentName: "compute1_0000:5e:00.0",
            numAccelerators: 1,
            driverName: "intel",
            attributes: [
              { key: "rc", value: "FPGA" },
              { key: "trait0", value: "CUSTOM_FPGA_INTEL" },
              { key: "trait1", value: "CUSTOM_FPGA_INTEL_PAC_ARRIA10" },
              { key: "trait2", value: REGION },
              { key: "trait3", value: NLB0 },
            ],
            // Only the VF is attachable once SR-IOV is on; the AFU id comes from the VF's port.
            attachHandles: [{ type: "PCI", info: pci("0000:5e:00.1") }],
          },
        ],
      },
    ]);
    expect(env.warnings).toEqual([]);
  });

  it("flat layout: Cyborg's single deployable, named after the VF", async () => {
    const [device] = await intelFpgaDriver.discover(fixtureEnv("mixed-host", { config: { intelFpga: { layout: "flat" } } }));
    expect(device!.deployables).toEqual([
      {
        name: "compute1_0000:5e:00.1",
        numAccelerators: 1,
        driverName: "intel",
        attributes: [
          { key: "rc", value: "FPGA" },
          { key: "trait0", value: "CUSTOM_FPGA_INTEL" },
          { key: "trait1", value: "CUSTOM_FPGA_INTEL_PAC_ARRIA10" },
          { key: "trait2", value: REGION },
          { key: "trait3", value: NLB0 },
        ],
        attachHandles: [{ type: "PCI", info: pci("0000:5e:00.1") }],
      },
    ]);
  });
});

describe("intel-fpga driver on other cards", () => {
  it("N3000 with SR-IOV off: the PF is the one accelerator and carries the port's AFU", async () => {
    const devices = await intelFpgaDriver.discover(fixtureEnv("fpga-variants"));
    const n3000 = devices.find((d) => d.stdBoardInfo?.product_id === "0x0b30")!;
    expect(n3000).toMatchObject({ model: "Intel PAC N3000", stub: false, controlPath: { type: "PCI", info: pci("0000:1b:00.0") } });
    const [parent, region] = n3000.deployables;
    expect(parent).toMatchObject({ name: "compute1_0000:1b:00.0", numAccelerators: 0, attachHandles: [] });
    expect(parent!.attributes.map((a) => a.value)).toEqual(["CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_PAC_N3000"]);
    expect(region).toMatchObject({ name: "compute1_0000:1b:00.0_region0", parentName: "compute1_0000:1b:00.0", numAccelerators: 1 });
    expect(region!.attachHandles).toEqual([{ type: "PCI", info: pci("0000:1b:00.0") }]);
    expect(region!.attributes.map((a) => a.value)).toEqual([
      "FPGA",
      "CUSTOM_FPGA_INTEL",
      "CUSTOM_FPGA_INTEL_PAC_N3000",
      "CUSTOM_FPGA_INTEL_REGION_A6D72D5D3D0D59A4A5F8D1E77E5FA4C3",
      "CUSTOM_FPGA_INTEL_FUNCTION_C000C9660D8242729AEFFE5F84570612",
    ]);
  });

  it("D5005 with two VFs: one accelerator and handle per VF, AFU ids normalised, an empty afu_id ignored", async () => {
    const devices = await intelFpgaDriver.discover(fixtureEnv("fpga-variants"));
    const d5005 = devices.find((d) => d.stdBoardInfo?.product_id === "0x0b2b")!;
    const region = d5005.deployables[1]!;
    expect(region.numAccelerators).toBe(2);
    expect(region.attachHandles).toEqual([
      { type: "PCI", info: pci("0000:3c:00.1") },
      { type: "PCI", info: pci("0000:3c:00.2") },
    ]);
    expect(region.attributes.slice(-2).map((a) => a.value)).toEqual([
      "CUSTOM_FPGA_INTEL_REGION_BFAC4D851EE856D8A27F44A4AB2AC66A",
      "CUSTOM_FPGA_INTEL_FUNCTION_850ADCC2_6CEB_4B22_9722_D43375B61C66",
    ]);
  });

  it("a card without the OPAE fpga/ child is a stub without traits", async () => {
    const devices = await intelFpgaDriver.discover(fixtureEnv("fpga-variants"));
    const stub = devices.find((d) => d.stub)!;
    expect(stub.controlPath.info).toEqual(pci("0000:3b:00.0"));
    expect(stub.deployables.map((d) => [d.name, d.attributes])).toEqual([
      ["compute1_0000:3b:00.0", []],
      ["compute1_0000:3b:00.0_region0", [{ key: "rc", value: "FPGA" }]],
    ]);
    expect(devices.map((d) => d.controlPath.info.bus)).toEqual(["1b", "3b", "3c"]);
  });

  it("finds nothing on a host without PACs", async () => {
    expect(await intelFpgaDriver.discover(fixtureEnv("no-accelerators"))).toEqual([]);
  });

  it("skips, with a warning, a card whose sysfs makes no sense and reports the healthy one", async () => {
    const env = fixtureEnv("malformed");
    const devices = await intelFpgaDriver.discover(env);
    expect(devices.map((d) => d.deployables[1]!.name)).toEqual(["compute1_0000:5f:00.0_region0"]);
    expect(devices[0]!.deployables[1]!.attributes.map((a) => a.value)).toEqual(["FPGA", "CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_PAC_ARRIA10", REGION, NLB0]);
    expect(env.warnings).toHaveLength(1);
    expect(env.warnings[0]!.fields.address).toBe("0000:5e:00.0");
    expect(env.warnings[0]!.fields.err).toMatch(/virtfn0 .* points at not-a-bdf/);
  });
});

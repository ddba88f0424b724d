import { describe, expect, it } from "vitest";
import { xilinxFpgaDriver } from "../../../src/clients/agent/drivers/xilinx-fpga.js";
import { fixtureEnv, pci } from "./fixture-env.js";

describe("xilinx-fpga driver", () => {
  it("merges the U250's mgmt and user PFs into one device with two control paths and two handles", async () => {
    const env = fixtureEnv("mixed-host");
    expect(await xilinxFpgaDriver.discover(env)).toEqual([
      {
        type: "FPGA",
        vendor: "10ee",
        model: "Xilinx Corporation Device",
        stdBoardInfo: { product_id: "5004", controller: "Processing accelerators" },
        vendorBoardInfo: { vendor_info: "fpga_vb_info" },
        controlPath: { type: "PCI", info: pci("0000:d8:00.0") },
        additionalControlPaths: [{ type: "PCI", info: pci("0000:d8:00.1") }],
        stub: false,
        deployables: [
          {
            name: "compute1_0000:d8:00.0",
            numAccelerators: 1,
            driverName: "XILINX",
            attributes: [
              { key: "rc", value: "FPGA" },
              { key: "trait0", value: "CUSTOM_FPGA_XILINX" },
              { key: "trait1", value: "CUSTOM_FPGA_XILINX_5004" },
            ],
            attachHandles: [
              { type: "PCI", info: pci("0000:d8:00.0") },
              { type: "PCI", info: pci("0000:d8:00.1") },
            ],
          },
        ],
      },
    ]);
    expect(env.warnings).toEqual([]);
  });

  it("does not take Intel's processing accelerators", async () => {
    const devices = await xilinxFpgaDriver.discover(fixtureEnv("mixed-host"));
    expect(devices.map((d) => d.vendor)).toEqual(["10ee"]);
  });

  it("finds nothing on a host without Xilinx cards", async () => {
    expect(await xilinxFpgaDriver.discover(fixtureEnv("no-accelerators"))).toEqual([]);
  });

  it("skips a truncated function line with a warning and still reports both cards", async () => {
    const env = fixtureEnv("malformed");
    const devices = await xilinxFpgaDriver.discover(env);
    expect(devices.map((d) => [d.deployables[0]!.name, d.deployables[0]!.attachHandles.length])).toEqual([
      ["compute1_0000:d8:00.0", 1],
      ["compute1_0000:d9:00.0", 2],
    ]);
    expect(env.warnings).toEqual([
      { fields: { line: "0000:d8:00.1 Processing accelerators [1200]: Xilinx Corpor" }, msg: "skipped a malformed lspci line" },
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { intelQatDriver } from "../../../src/clients/agent/drivers/intel-qat.js";
import { fixtureEnv, pci } from "./fixture-env.js";

describe("intel-qat driver", () => {
  it("reports each VF of a PF with SR-IOV on as its own deployable, and a PF without VFs as one", async () => {
    const env = fixtureEnv("mixed-host");
    const devices = await intelQatDriver.discover(env);
    expect(devices).toHaveLength(2);
    const [withVfs, plain] = devices;
    expect(withVfs).toMatchObject({
      type: "QAT",
      vendor: "0x8086",
      model: "Intel C62x Chipset QuickAssist Technology",
      stdBoardInfo: { product_id: "0x37c8" },
      vendorBoardInfo: null,
      controlPath: { type: "PCI", info: pci("0000:3d:00.0") },
      stub: false,
    });
    expect(withVfs!.deployables).toEqual(
      ["0000:3d:01.0", "0000:3d:01.1", "0000:3d:01.2", "0000:3d:01.3"].map((vf) => ({
        name: `compute1_${vf}`,
        numAccelerators: 1,
        driverName: "intel",
        attributes: [{ key: "rc", value: "CUSTOM_QAT" }, { key: "trait0", value: "CUSTOM_QAT_INTEL" }, { key: "trait1", value: "CUSTOM_QAT_INTEL_37C8" }],
        attachHandles: [{ type: "PCI", info: pci(vf) }],
      })),
    );
    expect(plain!.controlPath.info).toEqual(pci("0000:3f:00.0"));
    expect(plain!.deployables).toEqual([
      {
        name: "compute1_0000:3f:00.0",
        numAccelerators: 1,
        driverName: "intel",
        attributes: [{ key: "rc", value: "CUSTOM_QAT" }, { key: "trait0", value: "CUSTOM_QAT_INTEL" }, { key: "trait1", value: "CUSTOM_QAT_INTEL_37C8" }],
        attachHandles: [{ type: "PCI", info: pci("0000:3f:00.0") }],
      },
    ]);
    expect(env.warnings).toEqual([]);
  });

  it("finds nothing on a host without QAT", async () => {
    expect(await intelQatDriver.discover(fixtureEnv("no-accelerators"))).toEqual([]);
  });

  it("falls back to the directory name when uevent is missing, and ignores unreadable ids", async () => {
    const env = fixtureEnv("malformed");
    const devices = await intelQatDriver.discover(env);
    expect(devices.map((d) => [d.controlPath.info, d.deployables.map((dep) => dep.name)])).toEqual([
      [pci("0000:3d:00.0"), ["compute1_0000:3d:00.0"]],
      [pci("0000:3f:00.0"), ["compute1_0000:3f:01.0"]],
    ]);
    expect(env.warnings).toEqual([]);
  });
});

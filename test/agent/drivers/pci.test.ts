import { describe, expect, it } from "vitest";
import type { PciWhitelistEntry } from "../../../src/clients/agent/drivers/driver.js";
import { deviceTypeForClass, pciDriver } from "../../../src/clients/agent/drivers/pci.js";
import { fixtureEnv, pci } from "./fixture-env.js";

const discover = (whitelist: PciWhitelistEntry[], fixture = "mixed-host") => {
  const env = fixtureEnv(fixture, { config: { pci: { whitelist } } });
  return { env, devices: pciDriver.discover(env) };
};
const addresses = async (whitelist: PciWhitelistEntry[], fixture?: string) =>
  (await discover(whitelist, fixture).devices).map((d) => d.deployables[0]!.name.replace("compute1_", ""));

describe("pci driver", () => {
  it("reports nothing, and does not even run lspci, without a whitelist", async () => {
    const env = fixtureEnv("mixed-host", { lspci: () => Promise.reject(new Error("must not run")) });
    expect(await pciDriver.discover(env)).toEqual([]);
  });

  it("describes a whitelisted device as Cyborg's pci driver does, typed by its PCI class", async () => {
    const devices = await discover([{ vendorId: "15b3", productId: "1017" }]).devices;
    expect(devices).toEqual([
      {
        type: "NIC",
        vendor: "15b3",
        model: "1017",
        stdBoardInfo: { product_id: "1017", controller: "Ethernet controller" },
        vendorBoardInfo: null,
        controlPath: { type: "PCI", info: pci("0000:5f:00.0") },
        stub: false,
        deployables: [
          {
            name: "compute1_0000:5f:00.0",
            numAccelerators: 1,
            driverName: "MELLANOX",
            attributes: [
              { key: "rc", value: "CUSTOM_PCI" },
              { key: "trait0", value: "OWNER_CYBORG" },
              { key: "trait1", value: "CUSTOM_PCI_MELLANOX" },
              { key: "trait2", value: "CUSTOM_PCI_MELLANOX_1017" },
            ],
            attachHandles: [{ type: "PCI", info: pci("0000:5f:00.0") }],
          },
        ],
      },
    ]);
  });

  it("matches by vendor id alone, with or without 0x, any case", async () => {
    expect(await addresses([{ vendorId: "0x10EE" }])).toEqual(["0000:d8:00.0", "0000:d8:00.1"]);
  });

  it("matches by product id alone", async () => {
    expect(await addresses([{ productId: "1eb8" }])).toEqual(["0000:3b:00.0", "0000:86:00.0"]);
  });

  it.each([
    ["0000:af:00.0", ["0000:af:00.0"]],
    ["0000:af:*.*", ["0000:af:00.0", "0000:af:00.4", "0000:af:00.5"]],
    ["*:af:00.4", ["0000:af:00.4"]],
    ["af:00.5", ["0000:af:00.5"]],
    ["0000:3d:01", ["0000:3d:01.0", "0000:3d:01.1", "0000:3d:01.2", "0000:3d:01.3"]],
    [":01.", ["0000:3d:01.0", "0000:3d:01.1", "0000:3d:01.2", "0000:3d:01.3"]],
  ])("matches the address glob %s", async (address, expected) => {
    expect(await addresses([{ address }])).toEqual(expected);
  });

  it("needs every given field to match, and any entry to match", async () => {
    expect(await addresses([{ vendorId: "10de", address: "0000:86:*.*" }])).toEqual(["0000:86:00.0"]);
    expect(await addresses([{ vendorId: "10de", productId: "5004" }])).toEqual([]);
    expect(await addresses([{ productId: "a824" }, { address: "0000:03:00.0" }])).toEqual(["0000:03:00.0", "0000:60:00.0"]);
  });

  it("uses the raw vendor id as driver name and as the vendor part of its traits for unknown vendors", async () => {
    const [dev] = await discover([{ vendorId: "1a03" }], "no-accelerators").devices;
    expect(dev!.type).toBe("GPU");
    expect(dev!.deployables[0]!.driverName).toBe("1a03");
    expect(dev!.deployables[0]!.attributes.map((a) => a.value)).toEqual(["CUSTOM_PCI", "OWNER_CYBORG", "CUSTOM_PCI_1A03", "CUSTOM_PCI_1A03_2000"]);
  });

  it("types devices by class, unless the entry says otherwise", async () => {
    const devices = await discover([{ productId: "a824" }, { productId: "5005", deviceType: "FPGA" }, { productId: "1eb8", address: "0000:3b:00.0" }]).devices;
    expect(devices.map((d) => [d.controlPath.info.bus, d.type])).toEqual([
      ["3b", "GPU"],
      ["60", "SSD"],
      ["d8", "FPGA"],
    ]);
    expect(deviceTypeForClass("1200")).toBe("AICHIP");
    expect(deviceTypeForClass("0b40")).toBe("GPU");
  });

  it("reports a High Precision Time Synchronization card as an HPTS device when the entry says so", async () => {
    const [card, ...rest] = await discover([{ vendorId: "1d9b", productId: "0400", deviceType: "HPTS" }], "hpts-host").devices;
    expect(rest).toEqual([]);
    expect(card).toMatchObject({ type: "HPTS", vendor: "1d9b", model: "0400", controlPath: { type: "PCI", info: pci("0000:18:00.0") } });
    expect(card!.deployables[0]!.attributes.map((a) => a.value)).toEqual(["CUSTOM_PCI", "OWNER_CYBORG", "CUSTOM_PCI_FACEBOOK", "CUSTOM_PCI_FACEBOOK_0400"]);
    // By its class (memory controller) alone it would be a GPU, Cyborg's default.
    expect((await discover([{ vendorId: "1d9b" }], "hpts-host").devices)[0]!.type).toBe("GPU");
  });

  it("refuses a whitelist entry whose device type is unknown", async () => {
    await expect(discover([{ vendorId: "1d9b", deviceType: "CLOCK" as never }], "hpts-host").devices).rejects.toThrow(/entry 0: deviceType "CLOCK" is not one of GPU, FPGA, AICHIP, QAT, NIC, SSD, HPTS/);
  });

  it.each([
    [{ vendorId: "xyz" }, /entry 0: vendorId "xyz" is not a hex number/],
    [{ productId: "10000" }, /entry 0: productId "10000" is greater than ffff/],
    [{ address: "0000:af:00.8" }, /entry 0: address function "8" is greater than 7/],
    [{ address: "0000:0000:af:00.0" }, /more than domain:bus:slot/],
    [{ address: "0000:af:20.0" }, /address slot "20" is greater than 1f/],
  ])("refuses a bad whitelist entry %j", async (entry, message) => {
    await expect(discover([entry as PciWhitelistEntry]).devices).rejects.toThrow(message);
  });

  it("skips malformed lines with a warning", async () => {
    const { env, devices } = discover([{ vendorId: "10de" }], "malformed");
    expect((await devices).map((d) => d.controlPath.info.bus)).toEqual(["3b", "86", "af"]);
    expect(env.warnings).toHaveLength(5);
  });
});

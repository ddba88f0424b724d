/**
 * The generic PCI driver on an SR-IOV NIC (test/fixtures/sriov-nic): a physical function with VFs
 * enabled is reported with its VFs as attach handles (SRIOV_NET_VF) and its link speed as egress
 * and ingress bandwidth capacities; its VFs are not reported again; a port whose speed is unknown
 * reports its VFs without bandwidth; the report is one the service takes as it is.
 */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PciWhitelistEntry } from "../../../src/clients/agent/drivers/driver.js";
import { pciDriver } from "../../../src/clients/agent/drivers/pci.js";
import { validateReport } from "../../../src/domain/inventory/report-validation.js";
import { FIXTURES, fixtureEnv, pci } from "./fixture-env.js";

const discover = (whitelist: PciWhitelistEntry[], sysfsRoot?: string) =>
  pciDriver.discover(fixtureEnv("sriov-nic", { config: { pci: { whitelist } }, ...(sysfsRoot ? { sysfsRoot } : {}) }));
const E810 = { vendorId: "8086", productId: "159b" };
const kbps = 25_000 * 1000;

describe("pci driver on an SR-IOV NIC", () => {
  it("reports a PF's VFs as its attach handles and its link speed as bandwidth", async () => {
    const [port0] = await discover([E810]);
    expect(port0).toMatchObject({
      type: "NIC",
      controlPath: { type: "PCI", info: pci("0000:b1:00.0") },
      capacities: [
        { name: "egress bandwidth", resourceClass: "NET_BW_EGR_KILOBIT_PER_SEC", total: kbps, unit: "kbit/s" },
        { name: "ingress bandwidth", resourceClass: "NET_BW_IGR_KILOBIT_PER_SEC", total: kbps, unit: "kbit/s" },
      ],
    });
    expect(port0!.deployables).toEqual([
      {
        name: "compute1_0000:b1:00.0",
        numAccelerators: 4,
        driverName: "INTEL",
        attributes: [
          { key: "rc", value: "SRIOV_NET_VF" },
          { key: "trait0", value: "OWNER_CYBORG" },
          { key: "trait1", value: "CUSTOM_PCI_INTEL" },
          { key: "trait2", value: "CUSTOM_PCI_INTEL_159B" },
        ],
        attachHandles: ["0000:b1:01.0", "0000:b1:01.1", "0000:b1:01.2", "0000:b1:01.3"].map((a) => ({ type: "PCI", info: pci(a) })),
      },
    ]);
  });

  it("reports a port whose link speed is unknown with its VFs and no bandwidth", async () => {
    const [, port1] = await discover([E810]);
    expect(port1!.capacities).toBeUndefined();
    expect(port1!.deployables[0]!.attachHandles.map((h) => h.info)).toEqual([pci("0000:b1:11.0"), pci("0000:b1:11.1")]);
  });

  it("does not report a whitelisted VF again beside its PF", async () => {
    const devices = await discover([{ vendorId: "8086" }]);
    expect(devices.map((d) => d.deployables[0]!.name)).toEqual(["compute1_0000:00:00.0", "compute1_0000:b1:00.0", "compute1_0000:b1:00.1"]);
    // VFs whitelisted without their PF are passed through each on its own, as before.
    const alone = await discover([{ productId: "1889" }]);
    expect(alone.map((d) => d.deployables[0]!.attributes[0]!.value)).toEqual(Array(6).fill("CUSTOM_PCI"));
  });

  it("passes a PF with no VF enabled through whole", async () => {
    const root = await mkdtemp(join(tmpdir(), "sriov-"));
    try {
      await cp(join(FIXTURES, "sriov-nic", "sys"), root, { recursive: true, verbatimSymlinks: true });
      await writeFile(join(root, "devices", "pci0000:b0", "0000:b1:00.0", "sriov_numvfs"), "0\n");
      const [port0] = await discover([E810], root);
      expect(port0!.deployables[0]).toMatchObject({ numAccelerators: 1, attachHandles: [{ type: "PCI", info: pci("0000:b1:00.0") }] });
      expect(port0!.deployables[0]!.attributes[0]).toEqual({ key: "rc", value: "CUSTOM_PCI" });
      expect(port0!.capacities).toBeUndefined();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("makes a report the service takes as it is", async () => {
    const devices = await discover([{ vendorId: "8086" }]);
    const report = validateReport(devices);
    expect(report.find((d) => d.capacities)?.capacities?.map((c) => c.total)).toEqual([kbps, kbps]);
  });
});

/**
 * Intel QuickAssist (Cyborg qat/intel), found in sysfs: PFs whose vendor/device is 0x8086 and a
 * known QAT id; the address comes from `uevent` PCI_SLOT_NAME. A PF without VFs is one deployable;
 * with SR-IOV on, each VF is a deployable of its own (1 accelerator, 1 PCI handle) and the PF is
 * not attachable. rc CUSTOM_QAT and the agent-driver spec's device traits CUSTOM_QAT_INTEL and
 * CUSTOM_QAT_INTEL_<PID> (Cyborg reports no trait, so a profile could not tell QAT generations apart).
 */
import { join } from "node:path";
import type { DriverDeployable, DriverDevice } from "../../../domain/inventory/report.js";
import type { Driver, DriverEnv } from "./driver.js";
import { intelQatCleaner } from "./intel-qat-clean.js";
import { attributeList, deployableName, deviceTraits, isBdf, pciAddress } from "./naming.js";
import { discoverPhysicalFunctions, pciDeviceDir, readUevent, virtualFunctions } from "./sysfs.js";

const INTEL_VENDOR_ID = "8086";
const DRIVER_NAME = "intel";

export const INTEL_QAT_PRODUCTS: Record<string, string> = {
  "37c8": "Intel C62x Chipset QuickAssist Technology",
  "4940": "Intel 4xxx QuickAssist Technology",
};

/** PCI_SLOT_NAME from uevent; the directory name when uevent does not say. */
async function slotName(env: DriverEnv, bdf: string): Promise<string> {
  const slot = (await readUevent(join(pciDeviceDir(env.sysfsRoot, bdf), "uevent")))["PCI_SLOT_NAME"]?.toLowerCase();
  return slot && isBdf(slot) ? slot : bdf;
}

async function functionDeployable(env: DriverEnv, bdf: string, productId: string): Promise<DriverDeployable> {
  const slot = await slotName(env, bdf);
  return {
    name: deployableName(env.hostname, slot),
    numAccelerators: 1,
    driverName: DRIVER_NAME,
    attributes: attributeList("CUSTOM_QAT", deviceTraits("QAT", "INTEL", productId)),
    attachHandles: [{ type: "PCI", info: pciAddress(slot) }],
  };
}

async function qatDevice(env: DriverEnv, pf: string, productId: string): Promise<DriverDevice> {
  const vfs = await virtualFunctions(pciDeviceDir(env.sysfsRoot, pf));
  const deployables: DriverDeployable[] = [];
  for (const fn of vfs.length > 0 ? vfs : [pf]) deployables.push(await functionDeployable(env, fn, productId));
  return {
    type: "QAT",
    vendor: `0x${INTEL_VENDOR_ID}`,
    model: INTEL_QAT_PRODUCTS[productId]!,
    stdBoardInfo: { product_id: `0x${productId}` },
    vendorBoardInfo: null,
    controlPath: { type: "PCI", info: pciAddress(await slotName(env, pf)) },
    stub: false,
    deployables,
  };
}

export const intelQatDriver: Driver = {
  name: "intel-qat",
  cleaner: intelQatCleaner,
  discover(env) {
    return discoverPhysicalFunctions(env, INTEL_VENDOR_ID, INTEL_QAT_PRODUCTS, "QAT", (bdf, productId) => qatDevice(env, bdf, productId));
  },
};

/**
 * Generic PCI passthrough (Cyborg pci/pci): any `lspci -nnn -D` device that matches the configured
 * whitelist becomes one deployable `<host>_<BDF>` with 1 accelerator and a PCI handle, rc CUSTOM_PCI,
 * traits OWNER_CYBORG and the agent-driver spec's CUSTOM_PCI_<VENDOR>, CUSTOM_PCI_<VENDOR>_<PID>
 * (<VENDOR> the vendor's short name, or its id when unknown; Cyborg names the product trait
 * CUSTOM_PCI_PRODUCT_ID_<PID> and leaves out the vendor trait of an unknown vendor).
 * The driver name is the vendor's short name upper-cased, or the raw vendor id when unknown; the
 * model is the product id, as Cyborg.
 * Cyborg reports every such device as a GPU; here the device type follows the PCI class (see
 * deviceTypeForClass) unless the whitelist entry names one.
 */
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { DeviceType } from "../../../domain/shared/types.js";
import type { Driver } from "./driver.js";
import { parseLspci, warnMalformed, type LspciDevice } from "./lspci.js";
import { lspciDevice } from "./lspci-device.js";
import { attributeList, deviceTraits, normalizeTraitPart, pciAddress } from "./naming.js";
import { compileWhitelist, matchWhitelist } from "./pci-whitelist.js";

/** Cyborg's VENDOR_MAPS ({10de: nvidia, 102b: matrox}) extended with the usual accelerator vendors. */
export const PCI_VENDOR_NAMES: Record<string, string> = {
  "10de": "nvidia",
  "102b": "matrox",
  "8086": "intel",
  "10ee": "xilinx",
  "1bd4": "inspur",
  "15b3": "mellanox",
  "1002": "amd",
  "1022": "amd",
  "19e5": "huawei",
  "144d": "samsung",
  "14e4": "broadcom",
  "1d9b": "facebook",
  "1af4": "redhat",
};

/**
 * By PCI base class: 03 display → GPU, 12 processing accelerator → AICHIP (FPGAs have their own
 * drivers; what reaches the generic one with class 12 is mostly AI silicon), 02 network → NIC,
 * 01 mass storage → SSD; anything else → GPU, Cyborg's choice for every device.
 */
export function deviceTypeForClass(classCode: string): DeviceType {
  switch (classCode.slice(0, 2)) {
    case "03":
      return "GPU";
    case "12":
      return "AICHIP";
    case "02":
      return "NIC";
    case "01":
      return "SSD";
    default:
      return "GPU";
  }
}

function pciDevice(hostname: string, dev: LspciDevice, deviceType: DeviceType | undefined): DriverDevice {
  const vendorName = PCI_VENDOR_NAMES[dev.vendorId];
  const traits = ["OWNER_CYBORG", ...deviceTraits("PCI", vendorName ?? dev.vendorId, dev.productId)];
  return lspciDevice(hostname, dev, {
    type: deviceType ?? deviceTypeForClass(dev.classCode),
    model: dev.productId,
    vendorBoardInfo: null,
    deployable: {
      numAccelerators: 1,
      driverName: vendorName ? normalizeTraitPart(vendorName) : dev.vendorId,
      attributes: attributeList("CUSTOM_PCI", traits),
      attachHandles: [{ type: "PCI", info: pciAddress(dev.address) }],
    },
  });
}

export const pciDriver: Driver = {
  name: "pci",
  async discover(env) {
    const specs = compileWhitelist(env.config.pci?.whitelist ?? []);
    if (specs.length === 0) return [];
    const listing = parseLspci(await env.lspci());
    warnMalformed(listing, () => true, env.log);
    const devices: DriverDevice[] = [];
    for (const dev of listing.devices) {
      const spec = matchWhitelist(specs, dev);
      if (spec) devices.push(pciDevice(env.hostname, dev, spec.entry.deviceType));
    }
    return devices;
  },
};

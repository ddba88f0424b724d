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
 * A network physical function with SR-IOV VFs enabled is reported with its VFs as attach handles
 * (rc SRIOV_NET_VF) and its link's bandwidth as capacities (pci-sriov.ts); its VFs, whitelisted or
 * not, are not reported again as devices of their own.
 */
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { DeviceType } from "../../../domain/shared/types.js";
import type { Driver, DriverEnv } from "./driver.js";
import { readSriovFunction, SRIOV_VF_CLASS, type SriovFunction } from "./pci-sriov.js";
import { parseLspci, warnMalformed, type LspciDevice } from "./lspci.js";
import { lspciDevice } from "./lspci-device.js";
import { attributeList, deviceTraits, normalizeTraitPart, pciAddress } from "./naming.js";
import { compileWhitelist, matchWhitelist, type CompiledWhitelistEntry } from "./pci-whitelist.js";

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

function pciDevice(hostname: string, dev: LspciDevice, deviceType: DeviceType | undefined, sriov: SriovFunction | null): DriverDevice {
  const vendorName = PCI_VENDOR_NAMES[dev.vendorId];
  const traits = ["OWNER_CYBORG", ...deviceTraits("PCI", vendorName ?? dev.vendorId, dev.productId)];
  const device = lspciDevice(hostname, dev, {
    type: deviceType ?? deviceTypeForClass(dev.classCode),
    model: dev.productId,
    vendorBoardInfo: null,
    deployable: {
      numAccelerators: sriov ? sriov.vfs.length : 1,
      driverName: vendorName ? normalizeTraitPart(vendorName) : dev.vendorId,
      attributes: attributeList(sriov ? SRIOV_VF_CLASS : "CUSTOM_PCI", traits),
      attachHandles: (sriov ? sriov.vfs : [dev.address]).map((bdf) => ({ type: "PCI" as const, info: pciAddress(bdf) })),
    },
  });
  return sriov && sriov.capacities.length > 0 ? { ...device, capacities: sriov.capacities } : device;
}

/** A network function's SR-IOV state; null for any other class, or when sysfs cannot be read (with a warning). */
async function sriovOf(env: DriverEnv, dev: LspciDevice): Promise<SriovFunction | null> {
  if (!dev.classCode.startsWith("02")) return null;
  try {
    return await readSriovFunction(env.sysfsRoot, dev.address);
  } catch (err) {
    env.log?.warn({ address: dev.address, err: (err as Error).message }, "SR-IOV state unreadable: the function is reported whole");
    return null;
  }
}

export const pciDriver: Driver = {
  name: "pci",
  async discover(env) {
    const specs = compileWhitelist(env.config.pci?.whitelist ?? []);
    if (specs.length === 0) return [];
    const listing = parseLspci(await env.lspci());
    warnMalformed(listing, () => true, env.log);
    const found: Array<{ dev: LspciDevice; spec: CompiledWhitelistEntry; sriov: SriovFunction | null }> = [];
    for (const dev of listing.devices) {
      const spec = matchWhitelist(specs, dev);
      if (spec) found.push({ dev, spec, sriov: await sriovOf(env, dev) });
    }
    // A VF is its PF's attach handle: reported once, there.
    const handles = new Set(found.flatMap((f) => f.sriov?.vfs ?? []));
    return found.filter((f) => !handles.has(f.dev.address.toLowerCase())).map((f) => pciDevice(env.hostname, f.dev, f.spec.entry.deviceType, f.sriov));
  },
};

/**
 * Trait and resource-class naming (cyborg-reference 5.4 and 5.6, agent-driver spec): pure helpers
 * shared by the drivers, the inventory decider and device-profile validation.
 *
 * Normalisation per the spec: upper-case, spaces and hyphens become underscores. A custom trait is
 * `CUSTOM_[A-Z0-9_]+`; a standard (os-traits) trait such as OWNER_CYBORG is `[A-Z][A-Z0-9_]*`.
 * Placement limits both names to 255 characters.
 */
import { DomainError, type DeviceType } from "./types.js";

export const MAX_TRAIT_LENGTH = 255;
export const CUSTOM_TRAIT_RE = /^CUSTOM_[A-Z0-9_]+$/;
export const STANDARD_TRAIT_RE = /^[A-Z][A-Z0-9_]*$/;
export const OWNER_CYBORG = "OWNER_CYBORG";

/** Resource classes a profile may name without the CUSTOM_ prefix (Cyborg's constants.RESOURCES). */
export const STANDARD_RESOURCE_CLASSES = ["FPGA", "GPU", "VGPU", "PGPU", "CUSTOM_QAT", "CUSTOM_NIC", "CUSTOM_SSD"] as const;

/** os-resource-classes' classes that measure an amount of a shared thing rather than count devices (amount-keys.ts). */
export const STANDARD_AMOUNT_CLASSES = [
  "NET_BW_EGR_KILOBIT_PER_SEC",
  "NET_BW_IGR_KILOBIT_PER_SEC",
  "NET_PACKET_RATE_KILOPACKET_PER_SEC",
  "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC",
  "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC",
] as const;

/**
 * Placement's standard classes for SR-IOV functions and the amounts a NIC port shares
 * (os-resource-classes): a driver reports them and a profile names them as Neutron's ports do.
 */
export const NETWORK_RESOURCE_CLASSES = ["SRIOV_NET_VF", ...STANDARD_AMOUNT_CLASSES] as const;

/** Upper-case; runs of spaces and hyphens become one underscore; surrounding spaces dropped. */
export function normalizeTraitName(name: string): string {
  return name.trim().toUpperCase().replace(/[\s-]+/g, "_");
}

export function isCustomTrait(name: string): boolean {
  return name.length <= MAX_TRAIT_LENGTH && CUSTOM_TRAIT_RE.test(name);
}

/** A custom trait, or a standard one (OWNER_CYBORG, HW_*, ...). Expects a normalised name. */
export function isValidTrait(name: string): boolean {
  return name.length <= MAX_TRAIT_LENGTH && (CUSTOM_TRAIT_RE.test(name) || STANDARD_TRAIT_RE.test(name));
}

/** A standard resource class or a custom one. Expects a normalised name. */
export function isValidResourceClass(name: string): boolean {
  return (
    (STANDARD_RESOURCE_CLASSES as readonly string[]).includes(name) ||
    (NETWORK_RESOURCE_CLASSES as readonly string[]).includes(name) ||
    (name.length <= MAX_TRAIT_LENGTH && CUSTOM_TRAIT_RE.test(name))
  );
}

/**
 * One part of a trait name: normalised, and any character still outside [A-Z0-9_] dropped
 * (vendor strings such as "Xilinx Corp." come from hardware, not from an operator).
 */
export function traitPart(value: string): string {
  return normalizeTraitName(value).replace(/[^A-Z0-9_]/g, "").replace(/_+/g, "_").replace(/^_|_$/g, "");
}

/**
 * `CUSTOM_<PART>_<PART>...`, e.g. customTrait("FPGA", "Intel", "PAC Arria10") is
 * CUSTOM_FPGA_INTEL_PAC_ARRIA10. Empty parts are skipped and a leading CUSTOM_ is not doubled.
 * Throws BAD_USER_INPUT when nothing usable is left or the name is too long.
 */
export function customTrait(...parts: string[]): string {
  const body = parts.map(traitPart).filter((p) => p.length > 0).join("_");
  const name = body.startsWith("CUSTOM_") ? body : `CUSTOM_${body}`;
  if (!isCustomTrait(name)) {
    throw new DomainError("BAD_USER_INPUT", `cannot build a custom trait from ${JSON.stringify(parts)}`, "trait");
  }
  return name;
}

/**
 * The trait patterns of the agent-driver spec, the one place every driver names its traits from:
 * - device type: CUSTOM_<TYPE>_<VENDOR>_<PRODUCT> (e.g. CUSTOM_FPGA_INTEL_PAC_ARRIA10), and the
 *   vendor alone, CUSTOM_<TYPE>_<VENDOR>, so a profile can ask for any card of a vendor;
 * - region type: CUSTOM_<TYPE>_<VENDOR>_REGION_<ID>;
 * - function: CUSTOM_<TYPE>_<VENDOR>_FUNCTION_<ID>.
 * Uuids are upper-cased with hyphens turned to underscores. <TYPE> is the device type, or PCI for
 * the generic passthrough driver (whose resource class is CUSTOM_PCI too).
 */
export function deviceTypeTrait(type: TraitDeviceType, vendor: string, product?: string): string {
  return product === undefined ? customTrait(type, vendor) : customTrait(type, vendor, product);
}

/** The device-type traits of one device: the vendor's, then the product's. */
export function deviceTraits(type: TraitDeviceType, vendor: string, product: string): string[] {
  return [deviceTypeTrait(type, vendor), deviceTypeTrait(type, vendor, product)];
}

export type TraitDeviceType = DeviceType | "PCI";

/** Region type trait, CUSTOM_<TYPE>_<VENDOR>_REGION_<ID> (TYPE defaults to FPGA). */
export function regionTrait(vendor: string, regionId: string, type: TraitDeviceType = "FPGA"): string {
  return customTrait(type, vendor, "REGION", regionId);
}

/**
 * Function trait, CUSTOM_<TYPE>_<VENDOR>_FUNCTION_<ID> (TYPE defaults to FPGA); FPGA drivers name
 * their deployables' driver after the vendor, so programming derives it from the driver name.
 * Cyborg turns "-" into "_-", which leaves a hyphen Placement refuses; we turn it into "_".
 */
export function functionIdTrait(vendor: string, functionId: string, type: TraitDeviceType = "FPGA"): string {
  return customTrait(type, vendor, "FUNCTION", functionId);
}

const REGION_TRAIT_RE = /^CUSTOM_[A-Z0-9_]+_REGION_[A-Z0-9_]+$/;
const FUNCTION_TRAIT_RE = /^CUSTOM_[A-Z0-9_]+_FUNCTION_[A-Z0-9_]+$/;

/** A region type trait (the spec's; the names drivers used before, CUSTOM_FPGA_REGION_<VENDOR>_<ID>, match too). */
export function isRegionTrait(trait: string): boolean {
  return REGION_TRAIT_RE.test(trait);
}

/** A function trait (the spec's; the names drivers used before, CUSTOM_FPGA_FUNCTION_ID_<DRIVER>_<ID>, match too). */
export function isFunctionTrait(trait: string): boolean {
  return FUNCTION_TRAIT_RE.test(trait);
}

/** Whether `trait` is a region trait for the region type `regionId`, of any vendor. */
export function isRegionTraitFor(trait: string, regionId: string): boolean {
  return isRegionTrait(trait) && trait.endsWith(`_REGION_${traitPart(regionId)}`);
}

/** The function traits drivers reported before the spec's pattern: CUSTOM_FPGA_FUNCTION_ID_<DRIVER>_<ID>. */
const OLD_FUNCTION_TRAIT_PREFIX = "CUSTOM_FPGA_FUNCTION_ID_";

/** Whether `trait` is a function trait for `functionId`, of any vendor (in the spec's pattern or the one used before). */
export function isFunctionTraitFor(trait: string, functionId: string): boolean {
  const part = traitPart(functionId);
  if (trait.startsWith(OLD_FUNCTION_TRAIT_PREFIX)) return trait.endsWith(`_${part}`) && trait.length > OLD_FUNCTION_TRAIT_PREFIX.length + part.length;
  return isFunctionTrait(trait) && trait.endsWith(`_FUNCTION_${part}`);
}

/** What resourceClassFor accepts: a device type, or "PCI" for the generic PCI passthrough driver. */
export type ResourceClassSource = DeviceType | "PCI";

/**
 * The Placement resource class of a driver family (cyborg-reference 5.4): FPGA to FPGA, GPU to PGPU
 * (VGPU when the handles are mdevs), QAT/NIC/SSD/AICHIP/HPTS to CUSTOM_<TYPE>, generic PCI to CUSTOM_PCI.
 */
export function resourceClassFor(source: ResourceClassSource, opts: { mdev?: boolean } = {}): string {
  switch (source) {
    case "FPGA":
      return "FPGA";
    case "GPU":
      return opts.mdev ? "VGPU" : "PGPU";
    case "QAT":
      return "CUSTOM_QAT";
    case "NIC":
      return "CUSTOM_NIC";
    case "SSD":
      return "CUSTOM_SSD";
    case "AICHIP":
      return "CUSTOM_AICHIP";
    case "HPTS":
      return "CUSTOM_HPTS";
    case "PCI":
      return "CUSTOM_PCI";
    default: {
      const never: never = source;
      throw new DomainError("BAD_USER_INPUT", `unknown device type ${String(never)}`, "type");
    }
  }
}

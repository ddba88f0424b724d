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
export const FUNCTION_ID_TRAIT_PREFIX = "CUSTOM_FPGA_FUNCTION_ID";
export const REGION_TRAIT_PREFIX = "CUSTOM_FPGA_REGION";

/** Resource classes a profile may name without the CUSTOM_ prefix (Cyborg's constants.RESOURCES). */
export const STANDARD_RESOURCE_CLASSES = ["FPGA", "GPU", "VGPU", "PGPU", "CUSTOM_QAT", "CUSTOM_NIC", "CUSTOM_SSD"] as const;

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

/** The device-type trait of the agent-driver spec: CUSTOM_<TYPE>_<VENDOR>[_<PRODUCT>]. */
export function deviceTypeTrait(type: DeviceType, vendor: string, product?: string): string {
  return product === undefined ? customTrait(type, vendor) : customTrait(type, vendor, product);
}

/** CUSTOM_<TYPE>_PRODUCT_ID_<PID> (Xilinx and Inspur FPGAs, Inspur SSDs, generic PCI). */
export function productIdTrait(prefix: string, productId: string): string {
  return customTrait(prefix, "PRODUCT_ID", productId);
}

/** FPGA region trait, CUSTOM_FPGA_REGION_<VENDOR>_<ID> (uuids: upper-case, hyphens to underscores). */
export function regionTrait(vendor: string, regionId: string): string {
  return customTrait(REGION_TRAIT_PREFIX, vendor, regionId);
}

/**
 * FPGA function trait, CUSTOM_FPGA_FUNCTION_ID_<DRIVER>_<ID>. Cyborg turns "-" into "_-", which
 * leaves a hyphen in the name that Placement refuses; we turn it into "_" as for every trait.
 */
export function functionIdTrait(driverName: string, functionId: string): string {
  return customTrait(FUNCTION_ID_TRAIT_PREFIX, driverName, functionId);
}

/** What resourceClassFor accepts: a device type, or "PCI" for the generic PCI passthrough driver. */
export type ResourceClassSource = DeviceType | "PCI";

/**
 * The Placement resource class of a driver family (cyborg-reference 5.4): FPGA to FPGA, GPU to PGPU
 * (VGPU when the handles are mdevs), QAT/NIC/SSD/AICHIP to CUSTOM_<TYPE>, generic PCI to CUSTOM_PCI.
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
    case "PCI":
      return "CUSTOM_PCI";
    default: {
      const never: never = source;
      throw new DomainError("BAD_USER_INPUT", `unknown device type ${String(never)}`, "type");
    }
  }
}

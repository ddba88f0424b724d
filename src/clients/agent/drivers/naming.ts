/**
 * Driver-side naming: traits, deployable names, PCI addresses and the rc/traitN attribute list,
 * following Cyborg's conventions (cyborg-reference 4, 5.4, 5.6).
 */
import type { DriverAttribute } from "../../../domain/inventory/report.js";
import type { JsonObject, PciAddress } from "../../../domain/shared/types.js";

const BDF = /^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$/;

export function isBdf(value: string): boolean {
  return BDF.test(value);
}

/** Cyborg's pci_str_to_json: lower-case hex strings without 0x. Throws on anything but a full BDF. */
export function pciAddress(bdf: string): PciAddress & JsonObject {
  const m = BDF.exec(bdf);
  if (!m) throw new Error(`not a PCI address (domain:bus:device.function): ${JSON.stringify(bdf)}`);
  const [, domain, bus, device, fn] = m as unknown as [string, string, string, string, string];
  return { bus: bus.toLowerCase(), device: device.toLowerCase(), domain: domain.toLowerCase(), function: fn };
}

/**
 * Trait names come from the domain's one definition of the agent-driver spec's patterns
 * (deviceTraits, regionTrait, functionIdTrait); customTrait is its builder and normalizeTraitPart
 * its normalisation (upper-case, spaces and hyphens to underscores, anything else outside
 * [A-Z0-9_] dropped).
 */
export { customTrait, deviceTraits, functionIdTrait, regionTrait, traitPart as normalizeTraitPart } from "../../../domain/shared/traits.js";

/** `<host>_<BDF>`, the name (and so the RP name) Cyborg's drivers give a deployable. */
export function deployableName(hostname: string, bdf: string): string {
  return `${hostname}_${bdf}`;
}

/** Cyborg's fake driver's spelling of a name: one definition, the one the service checks names with. */
export { sanitizeRpName } from "../../../domain/inventory/deployable-names.js";

/** `rc` first (when given), then trait0, trait1, ... in order, duplicates dropped. */
export function attributeList(rc: string | null, traits: readonly string[]): DriverAttribute[] {
  const attrs: DriverAttribute[] = rc === null ? [] : [{ key: "rc", value: rc }];
  [...new Set(traits)].forEach((value, i) => attrs.push({ key: `trait${i}`, value }));
  return attrs;
}

/** Sysfs writes ids as "0x8086"; lspci as "8086". Returns 4 lower-case hex digits or null. */
export function hexId(value: string | null | undefined): string | null {
  if (!value) return null;
  const m = /^(?:0x)?([0-9a-fA-F]{4})$/.exec(value.trim());
  return m ? m[1]!.toLowerCase() : null;
}

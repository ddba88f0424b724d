/**
 * Cyborg's `[pci] passthrough_whitelist` (Nova's devspec): an entry matches a device when its
 * vendor id, product id and address all match; a missing field matches anything. Addresses use
 * Nova's glob syntax "[[domain:]bus:]slot[.function]" where a field may be "*" or left empty.
 * A bad entry is a configuration error and throws. (Nova's regex-dict addresses, `devname` and
 * the PF-address-matches-its-VFs rule are not supported.)
 */
import { DEVICE_TYPES } from "../../../domain/shared/types.js";
import type { PciWhitelistEntry } from "./driver.js";
import type { LspciDevice } from "./lspci.js";

const ANY = "*";

interface AddressGlob {
  domain: string;
  bus: string;
  slot: string;
  func: string;
}

export interface CompiledWhitelistEntry {
  vendorId: string;
  productId: string;
  address: AddressGlob;
  entry: PciWhitelistEntry;
}

function hexField(value: string, what: string, max: number, width: number): string {
  const v = value.trim();
  if (v === "" || v === ANY) return ANY;
  if (!/^(?:0x)?[0-9a-fA-F]+$/.test(v)) throw new Error(`${what} ${JSON.stringify(value)} is not a hex number`);
  const n = parseInt(v, 16);
  if (n > max) throw new Error(`${what} ${JSON.stringify(value)} is greater than ${max.toString(16)}`);
  return n.toString(16).padStart(width, "0");
}

function addressGlob(address: string): AddressGlob {
  const dot = address.indexOf(".");
  const dbs = dot < 0 ? address : address.slice(0, dot);
  const fields = dbs.split(":");
  if (fields.length > 3) throw new Error(`address ${JSON.stringify(address)} has more than domain:bus:slot`);
  const [domain, bus, slot] = [...Array<string>(3 - fields.length).fill(ANY), ...fields] as [string, string, string];
  return {
    domain: hexField(domain, "address domain", 0xffff, 4),
    bus: hexField(bus, "address bus", 0xff, 2),
    slot: hexField(slot, "address slot", 0x1f, 2),
    func: dot < 0 ? ANY : hexField(address.slice(dot + 1), "address function", 0x7, 1),
  };
}

export function compileWhitelist(entries: readonly PciWhitelistEntry[]): CompiledWhitelistEntry[] {
  return entries.map((entry, i) => {
    try {
      if (entry.deviceType !== undefined && !(DEVICE_TYPES as readonly string[]).includes(entry.deviceType)) {
        throw new Error(`deviceType ${JSON.stringify(entry.deviceType)} is not one of ${DEVICE_TYPES.join(", ")}`);
      }
      return {
        vendorId: hexField(entry.vendorId ?? ANY, "vendorId", 0xffff, 4),
        productId: hexField(entry.productId ?? ANY, "productId", 0xffff, 4),
        address: addressGlob(entry.address ?? "*:*:*.*"),
        entry,
      };
    } catch (err) {
      throw new Error(`pci whitelist entry ${i}: ${(err as Error).message}`);
    }
  });
}

const fieldMatches = (glob: string, value: string) => glob === ANY || glob === value;

/** The first entry that matches the device, or undefined. */
export function matchWhitelist(specs: readonly CompiledWhitelistEntry[], device: LspciDevice): CompiledWhitelistEntry | undefined {
  const [domain, bus, rest] = device.address.split(":") as [string, string, string];
  const [slot, func] = rest.split(".") as [string, string];
  return specs.find(
    (s) =>
      fieldMatches(s.vendorId, device.vendorId) &&
      fieldMatches(s.productId, device.productId) &&
      fieldMatches(s.address.domain, domain) &&
      fieldMatches(s.address.bus, bus) &&
      fieldMatches(s.address.slot, slot) &&
      fieldMatches(s.address.func, func),
  );
}

/** PCI addresses in control paths and attach_info: Cyborg's pci_str_to_json form (lower-case hex, no 0x). */
import { isJsonObject, sortKeys } from "../shared/json.js";
import { DomainError, type JsonObject } from "../shared/types.js";

const PARTS = [
  ["domain", 4, 0xffff],
  ["bus", 2, 0xff],
  ["device", 2, 0x1f],
  ["function", 1, 0x7],
] as const;

/**
 * Checks the four address keys and normalises them (lower-case, zero-padded: "0000", "af", "00", "0");
 * other keys (physical_network, asked_type, vgpu_mark, managed) are kept as they are. Keys come
 * out sorted, so the canonical JSON of the result identifies the address.
 */
export function normalizePciInfo(info: unknown, field: string): JsonObject {
  if (!isJsonObject(info)) throw new DomainError("BAD_USER_INPUT", "expected a JSON object with domain, bus, device and function", field);
  const out: JsonObject = { ...info };
  for (const [key, width, max] of PARTS) {
    const raw = info[key];
    const hex = typeof raw === "string" ? raw.trim().toLowerCase().replace(/^0x/, "") : "";
    const value = /^[0-9a-f]+$/.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
    if (!(value <= max) || hex.length > width) {
      throw new DomainError("BAD_USER_INPUT", `${key} must be a hex string of at most ${width} digits (max 0x${max.toString(16)}), got ${JSON.stringify(raw)}`, `${field}.${key}`);
    }
    out[key] = value.toString(16).padStart(width, "0");
  }
  return sortKeys(out);
}

/**
 * Parser for `lspci -nnn -D` lines, e.g.
 *   0000:af:00.0 3D controller [0302]: NVIDIA Corporation TU104GL [Tesla T4] [10de:1eb8] (rev a1)
 * lspci prints vendor and device names with no separator, so the vendor name is split off with a
 * table of known vendor strings and, failing that, a company-suffix heuristic; `description` keeps
 * the whole text, which is what Cyborg's drivers call the model.
 */
import type { DriverLog } from "./driver.js";

export interface LspciDevice {
  /** Full BDF, lower-case: "0000:af:00.0". */
  address: string;
  /** "0302" */
  classCode: string;
  /** "3D controller" */
  className: string;
  /** "NVIDIA Corporation TU104GL [Tesla T4]" */
  description: string;
  /** "NVIDIA Corporation"; "" when it cannot be told apart from the device name. */
  vendorName: string;
  /** "10de" */
  vendorId: string;
  /** "TU104GL [Tesla T4]" */
  deviceName: string;
  /** "1eb8" */
  productId: string;
  /** "a1", or null when lspci prints no revision. */
  rev: string | null;
}

export interface LspciListing {
  devices: LspciDevice[];
  /** Non-empty lines that are not a device line (truncated output, garbage, lspci warnings). */
  malformed: string[];
}

const LINE =
  /^([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) (.+?) \[([0-9a-fA-F]{4})\]: (.*) \[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\](?: \(rev ([0-9a-fA-F]{2})\))?(?: \(prog-if [^)]*\))?$/;

/** pci.ids vendor strings of the vendors our drivers care about. */
const KNOWN_VENDOR_NAMES: Record<string, string> = {
  "10de": "NVIDIA Corporation",
  "8086": "Intel Corporation",
  "10ee": "Xilinx Corporation",
  "102b": "Matrox Electronics Systems Ltd.",
  "15b3": "Mellanox Technologies",
  "1bd4": "Inspur Electronic Information Industry Co., Ltd.",
  "19e5": "Huawei Technologies Co., Ltd.",
  "1002": "Advanced Micro Devices, Inc. [AMD/ATI]",
  "1022": "Advanced Micro Devices, Inc. [AMD]",
  "144d": "Samsung Electronics Co Ltd",
  "14e4": "Broadcom Inc. and subsidiaries",
  "1af4": "Red Hat, Inc.",
};

const COMPANY_SUFFIX = /^(.*?\b(?:Corporation|Corp\.|Inc\.|Ltd\.|Co Ltd|Limited|Technologies|GmbH|AG))(?: (.*))?$/;

function splitVendor(vendorId: string, description: string): { vendorName: string; deviceName: string } {
  const known = KNOWN_VENDOR_NAMES[vendorId];
  if (known && (description === known || description.startsWith(`${known} `))) {
    return { vendorName: known, deviceName: description.slice(known.length).trim() };
  }
  const m = COMPANY_SUFFIX.exec(description);
  if (m) return { vendorName: m[1]!, deviceName: (m[2] ?? "").trim() };
  return { vendorName: "", deviceName: description };
}

/** One line, or null when it is not a complete device line. */
export function parseLspciLine(line: string): LspciDevice | null {
  const m = LINE.exec(line.trim());
  if (!m) return null;
  const [, address, className, classCode, description, vendorId, productId, rev] = m as unknown as string[];
  const vendor = vendorId!.toLowerCase();
  return {
    address: address!.toLowerCase(),
    classCode: classCode!.toLowerCase(),
    className: className!,
    description: description!,
    ...splitVendor(vendor, description!),
    vendorId: vendor,
    productId: productId!.toLowerCase(),
    rev: rev ? rev.toLowerCase() : null,
  };
}

export function parseLspci(output: string): LspciListing {
  const listing: LspciListing = { devices: [], malformed: [] };
  for (const raw of output.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "") continue;
    const device = parseLspciLine(line);
    if (device) listing.devices.push(device);
    else listing.malformed.push(line);
  }
  return listing;
}

/** Warns about the malformed lines a driver would have cared about (`relevant` decides). */
export function warnMalformed(listing: LspciListing, relevant: (line: string) => boolean, log: DriverLog | undefined): void {
  for (const line of listing.malformed) {
    if (relevant(line)) log?.warn({ line }, "skipped a malformed lspci line");
  }
}

/**
 * A bitstream of the catalogue (cyborg-nova-glance-interaction: "an FPGA image, possibly with
 * vendor-specific metadata; it may implement one or more functions"), with the metadata the seed
 * names: id and name, function id and name, region type, vendor; and what its content must hash to.
 */
import { DomainError } from "../shared/types.js";
import { normalizeFunctionId } from "./function-id.js";
import { isRegionTraitFor, regionTrait } from "../shared/traits.js";

export interface BitstreamMetadata {
  name: string;
  functionId: string | null;
  functionName: string | null;
  /** The region type it is built for, as the vendor's tools print it (Intel: the PR interface id). */
  regionType: string | null;
  vendor: string | null;
}

export interface Bitstream extends BitstreamMetadata {
  id: string;
  /** `<algorithm>:<hex digest>` of the content: sha256 (embedded), sha512 or md5 (Glance's os_hash). */
  checksum: string;
  size: number;
  createdAt: string;
}

export const CHECKSUM_RE = /^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}|md5:[0-9a-f]{32})$/;
const NAME_RE = /^[A-Za-z0-9._:=+-]{1,255}$/;
const TEXT_RE = /^[A-Za-z0-9_:=-]{1,255}$/;
const VENDOR_RE = /^[A-Za-z0-9_-]{1,64}$/;

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

/** An upload's metadata, checked; absent optional fields become null. */
export function validateBitstreamMetadata(input: Partial<Record<keyof BitstreamMetadata, unknown>>): BitstreamMetadata {
  const optional = (field: keyof BitstreamMetadata, re: RegExp, what: string): string | null => {
    const v = input[field];
    if (v === undefined || v === null || v === "") return null;
    if (typeof v !== "string" || !re.test(v)) throw bad(field, `${field} ${what}, got ${JSON.stringify(v)}`);
    return v;
  };
  const name = input.name;
  if (typeof name !== "string" || !NAME_RE.test(name)) {
    throw bad("name", `name must be 1 to 255 letters, digits and . _ : = + -, got ${JSON.stringify(name)}`);
  }
  const rawFunctionId = input.functionId;
  let functionId: string | null = null;
  if (rawFunctionId !== undefined && rawFunctionId !== null && rawFunctionId !== "") {
    functionId = normalizeFunctionId(rawFunctionId);
    if (functionId === null) throw bad("functionId", `functionId may only hold letters, digits, "-" and "_", got ${JSON.stringify(rawFunctionId)}`);
  }
  return {
    name,
    functionId,
    functionName: optional("functionName", TEXT_RE, 'may only hold letters, digits, "-", "_", ":" and "="'),
    regionType: optional("regionType", TEXT_RE, 'may only hold letters, digits, "-", "_", ":" and "="'),
    vendor: optional("vendor", VENDOR_RE, 'may only hold letters, digits, "-" and "_"'),
  };
}

/**
 * Whether a bitstream called `bitstreamName` answers to `wanted` (accel:bitstream_name): the same
 * name, or the name without its type suffix (`nlb0` answers for `nlb0.gbs`; `nlb0.gbs` only for itself).
 */
export function nameMatches(bitstreamName: string, wanted: string): boolean {
  if (bitstreamName === wanted) return true;
  const dot = bitstreamName.lastIndexOf(".");
  return dot > 0 && bitstreamName.slice(0, dot) === wanted;
}

export function checkChecksum(checksum: unknown, field = "checksum"): string {
  if (typeof checksum !== "string" || !CHECKSUM_RE.test(checksum)) {
    throw bad(field, `a checksum is sha256:<64 hex>, sha512:<128 hex> or md5:<32 hex>, got ${JSON.stringify(checksum)}`);
  }
  return checksum;
}

/**
 * Whether a bitstream is built for a region, by the region's traits: with a vendor it needs the
 * region trait CUSTOM_FPGA_<VENDOR>_REGION_<TYPE>; without, any CUSTOM_..._REGION_<TYPE>.
 * A bitstream that names no region type fits no region (a lookup by function needs one).
 */
export function fitsRegion(b: Pick<BitstreamMetadata, "regionType" | "vendor">, regionTraits: readonly string[]): boolean {
  if (b.regionType === null) return false;
  if (b.vendor !== null) {
    let wanted: string;
    try {
      wanted = regionTrait(b.vendor, b.regionType);
    } catch {
      return false;
    }
    return regionTraits.includes(wanted);
  }
  return regionTraits.some((t) => isRegionTraitFor(t, b.regionType!));
}

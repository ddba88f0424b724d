/**
 * Microversions 2.0-2.3 (cyborg-reference 1.1): `OpenStack-API-Version: accelerator 2.N` (a bare
 * `2.N` is still accepted, as Cyborg does), `latest` is 2.3, no header is 2.0; any other major, a
 * minor outside [0, 3] or an unparsable value is 406. History: 2.1 bind may carry /project_id;
 * 2.2 GET device_profiles/{name}; 2.3 devices show `status`.
 */
import { RestError } from "./errors.js";

export const MIN_MINOR = 0;
export const MAX_MINOR = 3;
export const MIN_VERSION = `2.${MIN_MINOR}`;
export const MAX_VERSION = `2.${MAX_MINOR}`;
const HEADER = "OpenStack-API-Version";

/** The minor version of 2.x a request asked for. */
export type Microversion = number;

/** Headers every /v2 response carries, whatever its status. */
export const RANGE_HEADERS: Readonly<Record<string, string>> = {
  "OpenStack-API-Minimum-Version": MIN_VERSION,
  "OpenStack-API-Maximum-Version": MAX_VERSION,
  Vary: HEADER,
};

export const versionHeader = (minor: Microversion): Record<string, string> => ({ [HEADER]: `accelerator 2.${minor}` });

/** The version a request asked for, from the raw header value(s). Throws 406 for one we do not serve. */
export function negotiate(header: string | string[] | undefined): Microversion {
  const value = requested(Array.isArray(header) ? header.join(",") : header);
  if (value === undefined) return MIN_MINOR;
  if (value.toLowerCase() === "latest") return MAX_MINOR;
  const m = /^(\d+)\.(\d+)$/.exec(value);
  if (!m) throw notAcceptable(`Invalid value ${JSON.stringify(value)} for the ${HEADER} header: give "accelerator 2.N" or "accelerator latest".`);
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major !== 2) {
    throw notAcceptable(`Mutually exclusive versions requested. Version ${value} requested but not supported by this service. The supported version range is: [${MIN_VERSION}, ${MAX_VERSION}].`);
  }
  if (minor < MIN_MINOR || minor > MAX_MINOR) {
    throw notAcceptable(`Version ${value} was requested but the minor version is not supported by this service. The supported version range is: [${MIN_VERSION}, ${MAX_VERSION}].`);
  }
  return minor;
}

/** The accelerator entry of a (comma-separated) header, or a bare legacy version; undefined when absent. */
function requested(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const entry of header.split(",")) {
    const parts = entry.trim().split(/\s+/).filter(Boolean);
    if (parts.length === 2 && parts[0]!.toLowerCase() === "accelerator") return parts[1]!;
    if (parts.length === 1) return parts[0]!;
  }
  return undefined;
}

const notAcceptable = (message: string) => new RestError("NOT_ACCEPTABLE", message, "OpenStack-API-Version", { ...RANGE_HEADERS });

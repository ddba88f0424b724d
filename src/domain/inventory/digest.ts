/**
 * A host report's digest: what an agent sends to ask "is my inventory still what you have?"
 * before sending the report itself. It hashes the validated report, which is normalised, so key
 * order, PCI address spelling or omitted optional fields do not change it; anything the diff
 * reads does. "v1:" names the recipe, so it can change without old digests matching new ones.
 */
import { sha256Hex } from "../shared/sha256.js";
import { canonicalJson } from "../shared/json.js";
import { DomainError } from "../shared/types.js";
import { validateReport, type ReportedDevice } from "./report-validation.js";

const DIGEST_RE = /^v1:[0-9a-f]{64}$/;

/** Throws BAD_USER_INPUT, as validateReport does, for a report the server would refuse. */
export function reportDigest(devices: unknown): string {
  return digestOfValidated(validateReport(devices));
}

/** The digest of a report validateReport already returned (the server has one from the diff). */
export function digestOfValidated(report: ReportedDevice[]): string {
  return "v1:" + sha256Hex(canonicalJson(report));
}

/** A digest as reportDigest writes it (hex digits in either case; returned in lower case). */
export function validateDigest(digest: unknown): string {
  const lower = typeof digest === "string" ? digest.toLowerCase() : "";
  if (!DIGEST_RE.test(lower)) throw new DomainError("BAD_USER_INPUT", 'digest must be "v1:" followed by 64 hex digits (a SHA-256)', "digest");
  return lower;
}

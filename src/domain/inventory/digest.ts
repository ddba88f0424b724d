/**
 * A host report's digest: what an agent sends to ask "is my inventory still what you have?"
 * before sending the report itself. It hashes the validated report, which is normalised, so key
 * order, PCI address spelling or omitted optional fields do not change it; anything the diff
 * reads does. "v1:" names the recipe, so it can change without old digests matching new ones.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../shared/json.js";
import { DomainError } from "../shared/types.js";
import { validateReport } from "./report-validation.js";

const DIGEST_RE = /^v1:[0-9a-f]{64}$/;

/** Throws BAD_USER_INPUT, as validateReport does, for a report the server would refuse. */
export function reportDigest(devices: unknown): string {
  return "v1:" + createHash("sha256").update(canonicalJson(validateReport(devices))).digest("hex");
}

/** A digest as reportDigest writes it (hex digits in either case; returned in lower case). */
export function validateDigest(digest: unknown): string {
  const lower = typeof digest === "string" ? digest.toLowerCase() : "";
  if (!DIGEST_RE.test(lower)) throw new DomainError("BAD_USER_INPUT", 'digest must be "v1:" followed by 64 hex digits (a SHA-256)', "digest");
  return lower;
}

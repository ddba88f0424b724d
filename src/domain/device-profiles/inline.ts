/**
 * Inline accelerator specs (a flavor's resources:/trait:/accel: groups, as os-acc receives them)
 * stand for a device profile named after their content: the same specs always name the same
 * profile, so creating it is idempotent and any number of instances share it.
 */
import { sha256Hex } from "../shared/sha256.js";
import { canonicalJson } from "../shared/json.js";
import type { ProfileGroup } from "./events.js";

export const INLINE_PROFILE_PREFIX = "inline-";

/** Groups as validateGroups returns them. */
export function inlineProfileName(groups: readonly ProfileGroup[]): string {
  return INLINE_PROFILE_PREFIX + sha256Hex(canonicalJson(groups)).slice(0, 24);
}

/**
 * Device-profile validation: every rule of cyborg-reference section 3 plus the spec's
 * (seeds/device-profiles.txt). Where Cyborg answers 500 to bad input, we answer BAD_USER_INPUT
 * with the offending field. The result is the profile as stored: groups in the operator's order,
 * keys in their order, trait and resource-class names normalised, values as strings.
 */
import { isUuid } from "../shared/json.js";
import { isJsonObject } from "../shared/json.js";
import { DomainError } from "../shared/types.js";
import { isCustomTrait, isValidResourceClass, normalizeTraitName } from "../shared/traits.js";
import { parseTolerations, tolerationText } from "../shared/tolerations.js";
import { ALTERNATIVES_KEY, MATCH_KEY, needText, parseAlternatives, parseMatch } from "../shared/placement-keys.js";
import { AMOUNTS_KEY, MAX_DRAW_AMOUNT, amountClassesOf, parseAmountClasses } from "../shared/amount-keys.js";
import { normalizeFunctionId } from "../bitstreams/function-id.js";
import type { ProfileGroup } from "./events.js";
import { ATTACH_TARGETS } from "./attach-target.js";

export { ATTACH_TARGETS };

export const PROFILE_NAME_RE = /^[a-zA-Z0-9-_]+$/;
export const MAX_PROFILE_NAME_LENGTH = 255;
export const MAX_DESCRIPTION_LENGTH = 65_535;
/** Upper bound of one `resources:` amount: each unit becomes one ARQ. */
export const MAX_RESOURCE_AMOUNT = 1000;
/** Cyborg sets no bound; a profile is a flavor's request, so these are generous. */
export const MAX_GROUPS = 100;
export const MAX_KEYS_PER_GROUP = 100;
export const MAX_KEY_LENGTH = 255;
export const MAX_VALUE_LENGTH = 255;
export const GROUP_KEY_PREFIXES = ["resources:", "trait:", "accel:"] as const;
export const TRAIT_VALUES = ["required", "forbidden"] as const;
/** The spec's field alphabet: letters, digits, "-", "_", ":" and "=". */
export const FIELD_VALUE_RE = /^[A-Za-z0-9_:=-]+$/;

/** A bitstream's name in the catalogue, with its type suffix (`nlb0.gbs`) or without. */
export const BITSTREAM_NAME_RE = /^[A-Za-z0-9_:=-]+(\.[A-Za-z0-9_-]+)?$/;

type AccelRule = { kind: "alternatives" } | { kind: "amounts" } | { kind: "match" } | { kind: "uuid" } | { kind: "functionId" } | { kind: "tolerations" } | { kind: "name"; re: RegExp; what: string } | { kind: "enum"; values: readonly string[] };
const FIELD_NAME = { kind: "name", re: FIELD_VALUE_RE, what: 'letters, digits, "-", "_", ":" and "="' } as const;
/** Valid `accel:` keys (spec, "Valid accel keys"). */
export const ACCEL_KEYS: Readonly<Record<string, AccelRule>> = {
  attach_target: { kind: "enum", values: ATTACH_TARGETS },
  bitstream_id: { kind: "uuid" },
  // The seed: "Name of the bitstream in Glance, including the suffix that indicates bitstream type".
  bitstream_name: { kind: "name", re: BITSTREAM_NAME_RE, what: 'letters, digits, "-", "_", ":" and "=", and one type suffix such as ".gbs"' },
  // What drivers report (AFU ids, hex strings such as the spec's '3AFB', uuids), not only uuids.
  function_id: { kind: "functionId" },
  function_name: FIELD_NAME,
  // The device is cleaned (its driver's clean step) when the ARQ leaves it, before the next tenant.
  clean_after_use: { kind: "enum", values: ["true", "false"] },
  // Which device taints the group's binds tolerate (shared/tolerations.ts).
  tolerations: { kind: "tolerations" },
  // Other ways to meet the group, in order of preference, for the placement engine (shared/placement-keys.ts).
  alternatives: { kind: "alternatives" },
  // Topology attributes the group's device shares with the other groups naming them.
  match: { kind: "match" },
  // Custom classes whose resources: keys are amounts drawn from the device's capacities (shared/amount-keys.ts).
  amounts: { kind: "amounts" },
};

export interface DeviceProfileInput {
  name: unknown;
  description?: unknown;
  groups: unknown;
  uuid?: unknown;
}

export interface ValidDeviceProfile {
  name: string;
  description: string | null;
  groups: ProfileGroup[];
  /** Lower-cased; null when the caller gave none. */
  uuid: string | null;
}

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

export function validateDeviceProfile(input: DeviceProfileInput): ValidDeviceProfile {
  const name = validateProfileName(input.name);
  return {
    name,
    description: validateDescription(input.description),
    groups: validateGroups(input.groups),
    uuid: validateProfileUuid(input.uuid),
  };
}

export function validateProfileName(name: unknown, field = "name"): string {
  if (typeof name !== "string" || name.length === 0) throw bad(field, "DeviceProfile name needed.");
  if (name.length > MAX_PROFILE_NAME_LENGTH) {
    throw bad(field, `Device profile name is longer than ${MAX_PROFILE_NAME_LENGTH} characters.`);
  }
  if (!PROFILE_NAME_RE.test(name)) throw bad(field, `Device profile name must be of the form ${PROFILE_NAME_RE.source}`);
  return name;
}

export function validateDescription(description: unknown): string | null {
  if (description === undefined || description === null) return null;
  if (typeof description !== "string") throw bad("description", "Device profile description must be a string.");
  if (description.length > MAX_DESCRIPTION_LENGTH) {
    throw bad("description", `Device profile description is longer than ${MAX_DESCRIPTION_LENGTH} characters.`);
  }
  return description;
}

function validateProfileUuid(uuid: unknown): string | null {
  if (uuid === undefined || uuid === null) return null;
  if (!isUuid(uuid)) throw bad("uuid", `Expected a UUID but received ${JSON.stringify(uuid)}.`);
  return uuid.toLowerCase();
}

export function validateGroups(groups: unknown): ProfileGroup[] {
  if (!Array.isArray(groups) || groups.length === 0) {
    throw bad("groups", "DeviceProfile needs a non-empty list of groups.");
  }
  if (groups.length > MAX_GROUPS) throw bad("groups", `A device profile has at most ${MAX_GROUPS} groups; this one has ${groups.length}.`);
  const valid = groups.map((group, i) => validateGroup(group, `groups[${i}]`));
  checkMatchesPaired(valid);
  return valid;
}

/** An `accel:match` attribute binds groups together: one named by a single group would constrain nothing, so it is refused. */
function checkMatchesPaired(groups: readonly ProfileGroup[]): void {
  const named = groups.map((g) => (g[MATCH_KEY] === undefined ? [] : g[MATCH_KEY].split(",")));
  named.forEach((attrs, i) => {
    for (const a of attrs) {
      if (named.filter((other) => other.includes(a)).length < 2) {
        throw bad(`groups[${i}].${MATCH_KEY}`, `accel:match=${a} in group ${i} alone constrains nothing: name ${a} in accel:match of another group too (the groups whose devices must share it)`);
      }
    }
  });
}

function validateGroup(group: unknown, field: string): ProfileGroup {
  if (!isJsonObject(group)) throw bad(field, "Each device profile group must be an object of key/value strings.");
  const entries = Object.entries(group);
  if (entries.length === 0) throw bad(field, "Each device profile group must have at least one key.");
  if (entries.length > MAX_KEYS_PER_GROUP) throw bad(field, `A device profile group has at most ${MAX_KEYS_PER_GROUP} keys; this one has ${entries.length}.`);
  const out: ProfileGroup = {};
  const rawValues = new Map<string, { rawKey: string; rawValue: string }>();
  for (const [rawKey, rawValue] of entries) {
    if (rawKey.length > MAX_KEY_LENGTH) throw bad(`${field}.${rawKey.slice(0, 40)}…`, `Device profile group keys are at most ${MAX_KEY_LENGTH} characters.`);
    const keyField = `${field}.${rawKey}`;
    const [key, value] = validateEntry(rawKey, rawValue, keyField);
    if (Object.hasOwn(out, key)) throw bad(keyField, `Duplicate key ${key} in the group (after normalisation).`);
    out[key] = value;
    rawValues.set(key, { rawKey, rawValue: String(rawValue) });
  }
  checkAmounts(out, rawValues, field);
  checkAccelExclusions(out, field);
  return out;
}

/**
 * Each `resources:` key in range: a count of accelerators (each one ARQ) up to MAX_RESOURCE_AMOUNT,
 * an amount drawn from a capacity up to MAX_DRAW_AMOUNT. A group drawing amounts names exactly one
 * class of accelerator, the handle the amounts are drawn beside; `accel:amounts` names only classes
 * the group asks for.
 */
function checkAmounts(group: ProfileGroup, raw: ReadonlyMap<string, { rawKey: string; rawValue: string }>, field: string): void {
  const amountClasses = amountClassesOf(group);
  const handles: string[] = [];
  let amounts = 0;
  for (const [key, value] of Object.entries(group)) {
    if (!key.startsWith("resources:")) continue;
    const isAmount = amountClasses.has(key.slice("resources:".length));
    const max = isAmount ? MAX_DRAW_AMOUNT : MAX_RESOURCE_AMOUNT;
    const { rawKey, rawValue } = raw.get(key)!;
    const n = Number(value);
    if (n < 1 || n > max) throw bad(`${field}.${rawKey}`, `Resources number ${rawValue} is invalid: it must be an integer from 1 to ${max}${isAmount ? ` (an amount of ${key.slice("resources:".length)})` : ""}`);
    if (isAmount) amounts++;
    else handles.push(key);
  }
  for (const c of group[AMOUNTS_KEY]?.split(",") ?? []) {
    if (group[`resources:${c}`] === undefined) throw bad(`${field}.${AMOUNTS_KEY}`, `accel:amounts names ${c}, which the group does not ask for: add resources:${c}=<amount>`);
  }
  if (amounts === 0) return;
  if (group[ALTERNATIVES_KEY] !== undefined) throw bad(`${field}.${ALTERNATIVES_KEY}`, "a group drawing amounts cannot have accel:alternatives: the amounts are drawn from the one device its resources: key binds");
  if (handles.length !== 1) {
    throw bad(field, `a group drawing amounts (${[...amountClasses].filter((c) => group[`resources:${c}`] !== undefined).join(", ")}) needs exactly one other resources: key, the accelerator they are drawn with (e.g. resources:SRIOV_NET_VF=1); it has ${handles.length}`);
  }
}

function validateEntry(key: string, rawValue: unknown, field: string): [string, string] {
  if (typeof rawValue !== "string" && !(typeof rawValue === "number" && Number.isFinite(rawValue))) {
    throw bad(field, "Device profile group values must be strings.");
  }
  const value = String(rawValue);
  if (value.length > MAX_VALUE_LENGTH) throw bad(field, `Device profile group values are at most ${MAX_VALUE_LENGTH} characters.`);
  const prefix = GROUP_KEY_PREFIXES.find((p) => key.startsWith(p));
  if (!prefix) throw bad(field, `Device profile group keys must be of the form ^(resources:|trait:|accel:); ${prefixFix(key)}`);
  const rest = key.slice(prefix.length);
  switch (prefix) {
    case "trait:":
      return [`trait:${validateTraitName(rest, field)}`, validateTraitValue(value, field)];
    case "resources:":
      return [`resources:${validateResourceClass(rest, field)}`, validateAmount(value, field)];
    case "accel:":
      return [`accel:${rest}`, validateAccel(rest, value, field)];
  }
}

/** The prefix the key was probably meant to have, and the valid ones with an example each. */
function prefixFix(key: string): string {
  const colon = key.indexOf(":");
  const head = (colon < 0 ? key : key.slice(0, colon + 1)).toLowerCase();
  const tail = colon < 0 ? "" : key.slice(colon + 1);
  const near = GROUP_KEY_PREFIXES.find((p) => head === p || (colon >= 0 && distance(head, p) <= 2));
  const guess = near ? `did you mean ${JSON.stringify(near + tail)}? ` : "";
  return `${guess}got ${JSON.stringify(key)}. The valid prefixes are resources: ("resources:FPGA": "1"), trait: ("trait:CUSTOM_FPGA_INTEL": "required") and accel: ("accel:attach_target": "VM")`;
}

/** Edit distance, for short strings. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

function validateTraitName(raw: string, field: string): string {
  const trait = normalizeTraitName(raw);
  if (!trait.startsWith("CUSTOM_")) throw bad(field, `Unsupported trait name format ${raw.trim()}, should start with CUSTOM_`);
  if (!isCustomTrait(trait)) {
    throw bad(field, `Unsupported trait name format ${raw.trim()}: a custom trait is CUSTOM_[A-Z0-9_]+ (at most 255 characters)`);
  }
  return trait;
}

function validateTraitValue(value: string, field: string): string {
  if (!(TRAIT_VALUES as readonly string[]).includes(value)) {
    throw bad(field, `Unsupported trait value ${value}, expected one of ${TRAIT_VALUES.join(", ")}`);
  }
  return value;
}

function validateResourceClass(raw: string, field: string): string {
  const rc = normalizeTraitName(raw);
  if (!isValidResourceClass(rc)) throw bad(field, `Unsupported resource class ${raw.trim()}`);
  return rc;
}

/** A whole number; its range depends on whether the key is an amount, which the whole group says (checkAmounts). */
function validateAmount(value: string, field: string): string {
  const trimmed = value.trim();
  const n = /^\+?\d{1,10}$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isInteger(n)) throw bad(field, `Resources number ${value} is invalid`);
  return String(n);
}

function validateAccel(key: string, value: string, field: string): string {
  const rule = ACCEL_KEYS[key];
  if (!rule || !Object.hasOwn(ACCEL_KEYS, key)) {
    throw bad(field, `Unknown accel key ${key}; valid keys are ${Object.keys(ACCEL_KEYS).map((k) => `accel:${k}`).join(", ")}`);
  }
  switch (rule.kind) {
    case "uuid":
      if (!isUuid(value)) throw bad(field, `accel:${key} must be a UUID, got ${JSON.stringify(value)}`);
      return value.toLowerCase();
    case "functionId": {
      const id = normalizeFunctionId(value);
      if (id === null) throw bad(field, `accel:${key} may only hold letters, digits, "-" and "_" (at most 255), got ${JSON.stringify(value)}`);
      return id;
    }
    case "alternatives":
      try {
        return parseAlternatives(value).map(needText).join(";");
      } catch (err) {
        throw bad(field, `accel:${key}: ${(err as Error).message}`);
      }
    case "amounts":
      try {
        return parseAmountClasses(value).join(",");
      } catch (err) {
        throw bad(field, `accel:${key}: ${(err as Error).message}`);
      }
    case "match":
      try {
        return parseMatch(value).join(",");
      } catch (err) {
        throw bad(field, `accel:${key}: ${(err as Error).message}`);
      }
    case "tolerations":
      try {
        return parseTolerations(value).map(tolerationText).join(",");
      } catch (err) {
        throw bad(field, `accel:${key}: ${(err as Error).message}`);
      }
    case "name":
      if (!rule.re.test(value)) throw bad(field, `accel:${key} may only hold ${rule.what}, got ${JSON.stringify(value)}`);
      return value;
    case "enum":
      if (!rule.values.includes(value)) throw bad(field, `accel:${key} must be one of ${rule.values.join(", ")}, got ${JSON.stringify(value)}`);
      return value;
  }
}

/** The keys that choose a region's bitstream: a group gives at most one, so what it asks is never ambiguous. */
export const BITSTREAM_CHOICE_KEYS = ["accel:bitstream_id", "accel:bitstream_name", "accel:function_id", "accel:function_name"] as const;

function checkAccelExclusions(group: ProfileGroup, field: string): void {
  if (group[ALTERNATIVES_KEY] !== undefined && Object.keys(group).filter((k) => k.startsWith("resources:")).length !== 1) {
    throw bad(`${field}.${ALTERNATIVES_KEY}`, "accel:alternatives replaces the group's resources: key, so the group needs exactly one resources:<RC>=<N> key (its first choice)");
  }
  const given = BITSTREAM_CHOICE_KEYS.filter((k) => group[k] !== undefined);
  if (given.length > 1) {
    throw bad(`${field}.${given[1]}`, `${given.join(" and ")} exclude each other: give one of ${BITSTREAM_CHOICE_KEYS.join(", ")}`);
  }
}

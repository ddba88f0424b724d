/**
 * Migrations (the device-profiles specification, "Versioning and upgrades"): when a release
 * renames a trait or a resource class, every profile that names the old one is moved to the new
 * one, as a new version. Pure: the mapping's validation and its effect on one profile's groups.
 */
import { isJsonObject } from "../shared/json.js";
import { isCustomTrait, isValidResourceClass, normalizeTraitName } from "../shared/traits.js";
import { DomainError } from "../shared/types.js";
import type { ProfileGroup, ProfileMigrationMapping } from "./events.js";

/** The most renamings one migration may carry (traits and resource classes together). */
export const MAX_MIGRATION_ENTRIES = 1000;

/** One key of one group that a migration renames. */
export interface ProfileKeyChange {
  groupIndex: number;
  from: string;
  to: string;
}

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

/** The mapping as the operator wrote it, names normalised as profiles store them (upper case, "_"). */
export function validateMigrationMapping(raw: unknown): ProfileMigrationMapping {
  if (!isJsonObject(raw)) throw bad("mapping", 'A migration is an object: { "traits": { "OLD": "NEW" }, "resourceClasses": { "OLD": "NEW" } }.');
  const unknownKey = Object.keys(raw).find((k) => k !== "traits" && k !== "resourceClasses");
  if (unknownKey !== undefined) throw bad(`mapping.${unknownKey}`, `Unknown migration key ${unknownKey}; a migration has "traits" and "resourceClasses".`);
  const traits = validateRenames(raw.traits, "mapping.traits", (n) => isCustomTrait(n), "a custom trait (CUSTOM_[A-Z0-9_]+)");
  const resourceClasses = validateRenames(raw.resourceClasses, "mapping.resourceClasses", isValidResourceClass, "a resource class");
  const entries = Object.keys(traits).length + Object.keys(resourceClasses).length;
  if (entries === 0) throw bad("mapping", "The migration renames nothing: give at least one trait or resource class.");
  if (entries > MAX_MIGRATION_ENTRIES) throw bad("mapping", `A migration renames at most ${MAX_MIGRATION_ENTRIES} names; this one renames ${entries}.`);
  return { traits, resourceClasses };
}

function validateRenames(raw: unknown, field: string, valid: (name: string) => boolean, what: string): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (!isJsonObject(raw)) throw bad(field, `${field} must be an object of old name -> new name.`);
  const out: Record<string, string> = {};
  for (const [rawOld, rawNew] of Object.entries(raw)) {
    if (typeof rawNew !== "string") throw bad(`${field}.${rawOld}`, "The new name must be a string.");
    const from = normalizeTraitName(rawOld);
    const to = normalizeTraitName(rawNew);
    if (!valid(from)) throw bad(`${field}.${rawOld}`, `${rawOld} is not ${what}.`);
    if (!valid(to)) throw bad(`${field}.${rawOld}`, `${rawNew} is not ${what}.`);
    if (from === to) throw bad(`${field}.${rawOld}`, `${rawOld} is renamed to itself.`);
    if (Object.hasOwn(out, from)) throw bad(`${field}.${rawOld}`, `${from} is renamed twice.`);
    out[from] = to;
  }
  // One pass: a chain (A -> B, B -> C) would leave the result depending on the order of keys.
  const chained = Object.values(out).find((to) => Object.hasOwn(out, to));
  if (chained !== undefined) throw bad(field, `${chained} is both renamed and a new name; give the final name directly.`);
  return out;
}

/** The groups after the mapping, the keys it renamed, and the part of the mapping that applied. */
export function migrateGroups(
  groups: readonly ProfileGroup[],
  mapping: ProfileMigrationMapping,
): { groups: ProfileGroup[]; changes: ProfileKeyChange[]; applied: ProfileMigrationMapping } {
  const changes: ProfileKeyChange[] = [];
  const applied: ProfileMigrationMapping = { traits: {}, resourceClasses: {} };
  const migrated = groups.map((group, groupIndex) => {
    const out: ProfileGroup = {};
    for (const [key, value] of Object.entries(group)) {
      const renamed = renameKey(key, mapping, applied);
      if (Object.hasOwn(out, renamed) || (renamed !== key && Object.hasOwn(group, renamed))) {
        throw bad(`groups[${groupIndex}].${key}`, `Renaming ${key} to ${renamed} would give group ${groupIndex} the key ${renamed} twice.`);
      }
      if (renamed !== key) changes.push({ groupIndex, from: key, to: renamed });
      out[renamed] = value;
    }
    return out;
  });
  return { groups: migrated, changes, applied };
}

function renameKey(key: string, mapping: ProfileMigrationMapping, applied: ProfileMigrationMapping): string {
  if (key.startsWith("trait:")) {
    const name = key.slice("trait:".length);
    const to = mapping.traits[name];
    if (to === undefined || !Object.hasOwn(mapping.traits, name)) return key;
    applied.traits[name] = to;
    return `trait:${to}`;
  }
  if (key.startsWith("resources:")) {
    const name = key.slice("resources:".length);
    const to = mapping.resourceClasses[name];
    if (to === undefined || !Object.hasOwn(mapping.resourceClasses, name)) return key;
    applied.resourceClasses[name] = to;
    return `resources:${to}`;
  }
  return key;
}

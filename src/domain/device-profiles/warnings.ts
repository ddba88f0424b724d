/**
 * What a profile's author should hear though the profile was accepted: keys or values the service
 * stored in another form than they were sent (`trait:custom_fake` is stored `trait:CUSTOM_FAKE`),
 * and required traits or resource classes that no host reports, so that its ARQs cannot bind yet.
 */
import { isJsonObject } from "../shared/json.js";
import type { ProfileGroup } from "./events.js";
import { amountClassesOf } from "../shared/amount-keys.js";

/** Each key or value of `sent` stored otherwise in `stored` (the groups as validation returned them, keys in the same order). */
export function normalisationWarnings(sent: unknown, stored: readonly ProfileGroup[]): string[] {
  if (!Array.isArray(sent)) return [];
  const out: string[] = [];
  stored.forEach((group, i) => {
    const raw = sent[i];
    if (!isJsonObject(raw)) return;
    const rawEntries = Object.entries(raw);
    Object.entries(group).forEach(([key, value], j) => {
      const [rawKey, rawValue] = rawEntries[j] ?? [key, value];
      if (rawKey !== key) out.push(`groups[${i}]: key ${JSON.stringify(rawKey)} is stored as ${JSON.stringify(key)}`);
      if (String(rawValue) !== value) out.push(`groups[${i}].${key}: value ${JSON.stringify(rawValue)} is stored as ${JSON.stringify(value)}`);
    });
  });
  return out;
}

/**
 * Required traits and resource classes of the groups that no host's resource provider reports.
 * An amount drawn from a capacity (shared/amount-keys.ts) is no provider's class: whether the
 * bound device offers it is checked at bind.
 */
export function unreportedWarnings(groups: readonly ProfileGroup[], reported: { traits: ReadonlySet<string>; resourceClasses: ReadonlySet<string> }): string[] {
  const out: string[] = [];
  groups.forEach((group, i) => {
    const amounts = amountClassesOf(group);
    for (const [key, value] of Object.entries(group)) {
      if (key.startsWith("resources:") && !amounts.has(key.slice(10)) && !reported.resourceClasses.has(key.slice(10))) {
        out.push(`groups[${i}]: no host reports resource class ${key.slice(10)} yet: ARQs of this group cannot bind until one does`);
      }
      if (key.startsWith("trait:") && value === "required" && !reported.traits.has(key.slice(6))) {
        out.push(`groups[${i}]: no host reports trait ${key.slice(6)} yet: ARQs of this group cannot bind until one does (check the spelling against resourceProviders' traits)`);
      }
    }
  });
  return out;
}

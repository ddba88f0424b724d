/**
 * What a flavor's extra specs ask for, as Nova writes them: a device profile name
 * (`accel:device_profile`), or inline groups of `resources:`, `trait:` and `accel:` keys. Keys with
 * a group number (`resources1:FPGA`, `trait1:CUSTOM_X`, `accel1:bitstream_id`) form one group per
 * number, in number order; keys without one form the first group.
 */
import { BadRequest } from "./errors.js";

export type AcceleratorSpec = { profile: string } | { groups: Array<Record<string, string>> };

const KEY = /^(resources|trait|accel)(\d*):(.+)$/;

export function parseExtraSpecs(extraSpecs: unknown): AcceleratorSpec {
  if (extraSpecs === null || typeof extraSpecs !== "object" || Array.isArray(extraSpecs)) {
    throw new BadRequest("extraSpecs must be an object: the flavor's extra specs", "extraSpecs");
  }
  const specs = extraSpecs as Record<string, unknown>;
  const profile = specs["accel:device_profile"];
  if (profile !== undefined) {
    if (typeof profile !== "string" || profile.length === 0) throw new BadRequest("accel:device_profile must name a device profile", "extraSpecs.accel:device_profile");
    return { profile };
  }
  const groups = new Map<number, Record<string, string>>();
  for (const [key, value] of Object.entries(specs)) {
    const m = KEY.exec(key);
    if (!m) continue; // other extra specs (hw:, quota:, ...) are not ours
    if (typeof value !== "string" && typeof value !== "number") throw new BadRequest(`${key} must be a string`, `extraSpecs.${key}`);
    const n = m[2] === "" ? -1 : Number(m[2]);
    const group = groups.get(n) ?? {};
    group[`${m[1]}:${m[3]}`] = String(value);
    groups.set(n, group);
  }
  if (groups.size === 0) throw new BadRequest("the extra specs ask for no accelerator: give accel:device_profile or resources:/trait:/accel: keys", "extraSpecs");
  return { groups: [...groups.entries()].sort(([a], [b]) => a - b).map(([, g]) => g) };
}

/**
 * What a flavor's extra specs ask for, as Nova writes them: a device profile name
 * (`accel:device_profile`), or inline groups of `resources:`, `trait:` and `accel:` keys. Keys with
 * a group number (`resources1:FPGA`, `trait1:CUSTOM_X`, `accel1:bitstream_id`) form one group per
 * number, in number order; keys without one form the first group.
 *
 * `bitstream:<uuid>` (the Nova-Glance specification's extra spec; `bitstream1:<uuid>` for group 1)
 * asks for that Glance bitstream in its group: it is the group's `accel:bitstream_id`. It goes with
 * inline groups only, and a group names one bitstream.
 */
import { BadRequest } from "./errors.js";

export type AcceleratorSpec = { profile: string } | { groups: Array<Record<string, string>> };

const KEY = /^(resources|trait|accel)(\d*):(.+)$/;
const BITSTREAM = /^bitstream(\d*):(.*)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parseExtraSpecs(extraSpecs: unknown): AcceleratorSpec {
  if (extraSpecs === null || typeof extraSpecs !== "object" || Array.isArray(extraSpecs)) {
    throw new BadRequest("extraSpecs must be an object: the flavor's extra specs", "extraSpecs");
  }
  const specs = extraSpecs as Record<string, unknown>;
  const profile = specs["accel:device_profile"];
  if (profile !== undefined) {
    if (typeof profile !== "string" || profile.length === 0) throw new BadRequest("accel:device_profile must name a device profile", "extraSpecs.accel:device_profile");
    const bitstream = Object.keys(specs).find((k) => BITSTREAM.test(k));
    if (bitstream) throw new BadRequest(`${bitstream} goes with inline groups; with accel:device_profile, put accel:bitstream_id in the profile`, `extraSpecs.${bitstream}`);
    return { profile };
  }
  const groups = new Map<number, Record<string, string>>();
  const groupOf = (n: string) => {
    const i = n === "" ? -1 : Number(n);
    const group = groups.get(i) ?? {};
    groups.set(i, group);
    return group;
  };
  for (const [key, value] of Object.entries(specs)) {
    const b = BITSTREAM.exec(key);
    if (b) {
      addBitstream(groupOf(b[1]!), key, b[2]!);
      continue;
    }
    const m = KEY.exec(key);
    if (!m) continue; // other extra specs (hw:, quota:, ...) are not ours
    if (typeof value !== "string" && typeof value !== "number") throw new BadRequest(`${key} must be a string`, `extraSpecs.${key}`);
    const group = groupOf(m[2]!);
    const k = `${m[1]}:${m[3]}`;
    if (k === "accel:bitstream_id" && group[k] !== undefined) {
      // Set by a bitstream:<uuid> key of the group: the two must agree.
      if (group[k] !== String(value).toLowerCase()) throw new BadRequest(`${key} names another bitstream than the group's bitstream:<uuid>`, `extraSpecs.${key}`);
      continue;
    }
    group[k] = String(value);
  }
  if (groups.size === 0) throw new BadRequest("the extra specs ask for no accelerator: give accel:device_profile or resources:/trait:/accel: keys", "extraSpecs");
  return { groups: [...groups.entries()].sort(([a], [b]) => a - b).map(([, g]) => g) };
}

function addBitstream(group: Record<string, string>, key: string, uuid: string): void {
  if (!UUID.test(uuid)) throw new BadRequest(`${key} must name a bitstream by its Glance uuid: bitstream:<uuid>`, `extraSpecs.${key}`);
  const id = uuid.toLowerCase();
  const held = group["accel:bitstream_id"];
  if (held !== undefined && held.toLowerCase() !== id) throw new BadRequest(`${key} names another bitstream than the group's accel:bitstream_id (${held})`, `extraSpecs.${key}`);
  group["accel:bitstream_id"] = id;
}

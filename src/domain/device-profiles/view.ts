/** A device profile as clients see it: the same from the log (a mutation's answer) and from the read model. */
import type { DeviceProfile } from "./decider.js";
import type { ProfileGroup } from "./events.js";

export interface DeviceProfileView {
  uuid: string;
  name: string;
  description: string | null;
  /** Each group as the operator wrote it, keys in their original order. */
  groups: ProfileGroup[];
  createdAt: string;
  /** Profiles are immutable: always null. */
  updatedAt: string | null;
}

export function deviceProfileView(p: DeviceProfile): DeviceProfileView {
  return { uuid: p.uuid, name: p.name, description: p.description, groups: p.groups.map((g) => ({ ...g })), createdAt: p.createdAt, updatedAt: null };
}

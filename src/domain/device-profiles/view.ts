/** A device profile as clients see it: the same from the log (a mutation's answer) and from the read model. */
import type { DeviceProfile } from "./state.js";
import type { ProfileGroup } from "./events.js";

export interface DeviceProfileView {
  uuid: string;
  name: string;
  description: string | null;
  /** The current version's groups, each as the operator wrote it, keys in their original order. */
  groups: ProfileGroup[];
  createdAt: string;
  /** When the profile last changed (a new version, enabled or disabled, renamed); null until then. */
  updatedAt: string | null;
  /** 1 at creation, one more at each update or migration. */
  version: number;
  /** A disabled profile refuses new ARQs. */
  enabled: boolean;
  /** Made for inline accelerator specs (os-acc): listed to nobody, deleted with its last ARQ. */
  inline: boolean;
}

/** One version of a profile, as it was made. */
export interface DeviceProfileVersionView {
  version: number;
  description: string | null;
  groups: ProfileGroup[];
  /** When this version was made (the creation, for version 1). */
  createdAt: string;
  /** The renamings that made this version, when a migration did. */
  migration: { traits: Record<string, string>; resourceClasses: Record<string, string> } | null;
}

export function deviceProfileView(p: DeviceProfile): DeviceProfileView {
  return {
    uuid: p.uuid,
    name: p.name,
    description: p.description,
    groups: p.groups.map((g) => ({ ...g })),
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    version: p.version,
    enabled: p.enabled,
    inline: p.inline,
  };
}

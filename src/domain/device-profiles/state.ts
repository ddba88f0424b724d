/** A device profile's state on its stream `deviceProfile-<name>`, and the checks every decision makes on it. */
import type { Set as PersistentSet } from "immutable";
import { DomainError } from "../shared/types.js";
import type { ProfileGroup } from "./events.js";

export interface DeviceProfile {
  uuid: string;
  name: string;
  description: string | null;
  /** The current version's groups. */
  groups: ProfileGroup[];
  createdAt: string;
  /** 1 at creation, one more at each update (a migration included). */
  version: number;
  /** A disabled profile refuses new ARQs. */
  enabled: boolean;
  /** Made for inline accelerator specs (os-acc). */
  inline: boolean;
  /** When the profile last changed (update, enable, disable, rename); null until then. */
  updatedAt: string | null;
}

export type DeviceProfileState =
  | { status: "absent" }
  /** liveArqs is a persistent set: evolve stays pure at O(log n) per event on a busy profile. */
  | { status: "active"; profile: DeviceProfile; liveArqs: PersistentSet<string> }
  | { status: "deleted"; profile: DeviceProfile; deletedAt: string }
  /** The profile moved to `newName` (same uuid); this name is free again. */
  | { status: "renamed"; profile: DeviceProfile; newName: string; renamedAt: string };

export type ActiveProfile = Extract<DeviceProfileState, { status: "active" }>;

export function requireActive(state: DeviceProfileState, name: string, uuid: string | undefined): ActiveProfile {
  if (state.status !== "active" || (uuid !== undefined && state.profile.uuid !== uuid.toLowerCase())) {
    const what = uuid === undefined ? `name=${name}` : `uuid=${uuid}`;
    const moved = state.status === "renamed" ? ` (it was renamed to ${state.newName})` : "";
    throw new DomainError("NOT_FOUND", `Device Profile not found with ${what}${moved}`, uuid === undefined ? "name" : "uuid");
  }
  return state;
}

/** A disabled profile makes no new ARQs; it says so, with the code clients can act on. */
export function refuseDisabled(profile: DeviceProfile): void {
  if (!profile.enabled) {
    throw new DomainError("PROFILE_DISABLED", `Device profile ${profile.name} is disabled: it makes no new accelerator requests until an operator enables it.`, "deviceProfileName", {
      name: profile.name,
    });
  }
}


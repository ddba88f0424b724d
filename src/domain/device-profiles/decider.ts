/**
 * Stream `deviceProfile-<name>`: one profile name's life (created, updated, disabled, renamed,
 * deleted, re-created) and the ARQs created from the current incarnation, so that a profile in
 * use cannot be deleted. Updates, enabling and renaming are decided in lifecycle.ts.
 */
import { Set as PersistentSet } from "immutable";
import { arqCountFor } from "./arq-counts.js";
import { assertNever, type Decider } from "../shared/decider.js";
import { DomainError } from "../shared/types.js";
import type { DeviceProfileEvent, ProfileGroup } from "./events.js";
import { decideLifecycle, type LifecycleCommand } from "./lifecycle.js";
import { refuseDisabled, requireActive, type DeviceProfile, type DeviceProfileState } from "./state.js";
import { validateDeviceProfile } from "./validation.js";

export type { ActiveProfile, DeviceProfile, DeviceProfileState } from "./state.js";

export type DeviceProfileCommand =
  | {
      type: "CreateDeviceProfile";
      /** name, description and groups as the caller sent them: decide validates them. */
      data: { uuid: string; name: unknown; description?: unknown; groups: unknown; at: string; inline?: boolean };
    }
  | { type: "DeleteDeviceProfile"; data: { name: string; /** Refuse unless the live profile has this uuid. */ uuid?: string; at: string } }
  | {
      type: "CreateArqs";
      /** arqUuids: pre-generated, exactly as many as the profile (or its group) asks for. */
      data: { name: string; profileUuid?: string; groupIndex?: number | null; arqUuids: string[]; at: string };
    }
  | { type: "RecordArqsDeleted"; data: { name: string; profileUuid: string; arqUuids: string[]; at: string } }
  /** Records live ARQs of this incarnation that a creation made without recording them (it stopped before its profile step). */
  | { type: "RecordArqsCreated"; data: { name: string; profileUuid: string; arqUuids: string[]; at: string } }
  | LifecycleCommand;

export const initialState = (): DeviceProfileState => ({ status: "absent" });

export function evolve(state: DeviceProfileState, event: DeviceProfileEvent): DeviceProfileState {
  switch (event.type) {
    case "DeviceProfileCreated": {
      const { uuid, name, description, groups, createdAt } = event.data;
      const profile = { uuid, name, description, groups, createdAt, version: 1, enabled: true, inline: event.data.inline === true, updatedAt: null };
      return { status: "active", profile, liveArqs: PersistentSet<string>() };
    }
    case "DeviceProfileDeleted":
      return state.status === "active" ? { status: "deleted", profile: state.profile, deletedAt: event.data.deletedAt } : state;
    case "DeviceProfileUpdated": {
      const { version, description, groups, at } = event.data;
      return changed(state, event.data.uuid, (p) => ({ ...p, version, description, groups, updatedAt: at }));
    }
    case "DeviceProfileDisabled":
      return changed(state, event.data.uuid, (p) => ({ ...p, enabled: false, updatedAt: event.data.at }));
    case "DeviceProfileEnabled":
      return changed(state, event.data.uuid, (p) => ({ ...p, enabled: true, updatedAt: event.data.at }));
    case "DeviceProfileRenamed":
      if (state.status !== "active" || state.profile.uuid !== event.data.uuid) return state;
      return { status: "renamed", profile: state.profile, newName: event.data.newName, renamedAt: event.data.at };
    case "DeviceProfileRenamedFrom": {
      const d = event.data;
      const profile = { uuid: d.uuid, name: d.name, description: d.description, groups: d.groups, createdAt: d.createdAt, version: d.version, enabled: d.enabled, inline: false, updatedAt: d.at };
      return { status: "active", profile, liveArqs: PersistentSet<string>(d.liveArqUuids) };
    }
    case "DeviceProfileArqsCreated": {
      if (state.status !== "active" || state.profile.uuid !== event.data.profileUuid) return state;
      return { ...state, liveArqs: state.liveArqs.union(event.data.arqUuids) };
    }
    case "DeviceProfileArqsDeleted": {
      if (state.status !== "active" || state.profile.uuid !== event.data.profileUuid) return state;
      // Not Set.subtract: it walks the whole set and scans the array for each member (O(n·m)).
      return { ...state, liveArqs: state.liveArqs.withMutations((s) => event.data.arqUuids.forEach((a) => s.remove(a))) };
    }
    default:
      return assertNever(event);
  }
}

export function decide(command: DeviceProfileCommand, state: DeviceProfileState): DeviceProfileEvent[] {
  switch (command.type) {
    case "CreateDeviceProfile":
      return create(command.data, state);
    case "DeleteDeviceProfile": {
      const { profile, liveArqs } = requireActive(state, command.data.name, command.data.uuid);
      const live = liveArqs.size;
      if (live > 0) {
        throw new DomainError(
          "CONFLICT",
          `Device profile ${profile.name} is used by ${live} accelerator request${live === 1 ? "" : "s"}; delete them first.`,
          "names",
          { name: profile.name, arqCount: live },
        );
      }
      return [{ type: "DeviceProfileDeleted", data: { uuid: profile.uuid, name: profile.name, deletedAt: command.data.at, version: profile.version } }];
    }
    case "CreateArqs": {
      const { arqUuids, groupIndex, profileUuid } = command.data;
      const { profile } = requireActive(state, command.data.name, undefined);
      if (profileUuid !== undefined && profile.uuid !== profileUuid) {
        throw new DomainError("CONFLICT", `Device profile ${profile.name} was deleted and re-created meanwhile.`, "deviceProfileName");
      }
      refuseDisabled(profile);
      const expected = arqCountFor(profile.groups, groupIndex);
      if (arqUuids.length !== expected || new Set(arqUuids).size !== expected) {
        throw new DomainError("BAD_USER_INPUT", `expected ${expected} distinct new ARQ uuids, got ${arqUuids.length}`, "arqUuids");
      }
      return expected === 0 ? [] : [{ type: "DeviceProfileArqsCreated", data: { profileUuid: profile.uuid, arqUuids } }];
    }
    case "RecordArqsDeleted": {
      // Idempotent: only ARQs this incarnation still counts as live are recorded.
      if (state.status !== "active" || state.profile.uuid !== command.data.profileUuid) return [];
      const arqUuids = [...new Set(command.data.arqUuids)].filter((id) => state.liveArqs.has(id));
      return arqUuids.length === 0 ? [] : [{ type: "DeviceProfileArqsDeleted", data: { profileUuid: state.profile.uuid, arqUuids } }];
    }
    case "RecordArqsCreated": {
      // Idempotent: only ARQs this incarnation does not count yet; nothing for another incarnation.
      if (state.status !== "active" || state.profile.uuid !== command.data.profileUuid) return [];
      const arqUuids = [...new Set(command.data.arqUuids)].filter((id) => !state.liveArqs.has(id));
      return arqUuids.length === 0 ? [] : [{ type: "DeviceProfileArqsCreated", data: { profileUuid: state.profile.uuid, arqUuids } }];
    }
    default:
      return decideLifecycle(command, state);
  }
}

/** The active profile with this uuid, changed; any other state as it is. */
function changed(state: DeviceProfileState, uuid: string, change: (p: DeviceProfile) => DeviceProfile): DeviceProfileState {
  return state.status === "active" && state.profile.uuid === uuid ? { ...state, profile: change(state.profile) } : state;
}

function create(data: Extract<DeviceProfileCommand, { type: "CreateDeviceProfile" }>["data"], state: DeviceProfileState) {
  const valid = validateDeviceProfile(data);
  if (state.status === "active") {
    throw new DomainError("CONFLICT", `A device_profile with name ${valid.name} already exists.`, "name");
  }
  if (valid.uuid !== null && valid.uuid !== data.uuid.toLowerCase()) {
    throw new DomainError("BAD_USER_INPUT", "the command's uuid and the input's uuid differ", "uuid");
  }
  const event: DeviceProfileEvent = {
    type: "DeviceProfileCreated",
    data: { uuid: data.uuid.toLowerCase(), name: valid.name, description: valid.description, groups: valid.groups, createdAt: data.at, ...(data.inline ? { inline: true } : {}) },
  };
  return [event];
}

export const deviceProfileDecider: Decider<DeviceProfileCommand, DeviceProfileState, DeviceProfileEvent> = {
  initialState,
  evolve,
  decide,
};

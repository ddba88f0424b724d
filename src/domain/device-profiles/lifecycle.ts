/**
 * A profile's changes after creation (the device-profiles specification's use cases): update as a
 * new version, migration of renamed traits and resource classes, enable and disable, and rename.
 *
 * A rename spans two profile streams and the uuid claim: the old name's stream records
 * `DeviceProfileRenamed` (its name is free again), the new name's stream starts with
 * `DeviceProfileRenamedFrom`, the profile carried over whole (uuid, version, enabled, live ARQs),
 * and the claim `deviceProfileUuid-<uuid>` moves to the new name. The application appends the
 * three as one sequence.
 */
import { DomainError } from "../shared/types.js";
import type { DeviceProfileEvent, ProfileMigrationMapping } from "./events.js";
import { migrateGroups } from "./migration.js";
import { requireActive, type DeviceProfile, type DeviceProfileState } from "./state.js";
import { validateGroups, validateProfileName, validateDescription } from "./validation.js";

export type LifecycleCommand =
  | {
      type: "UpdateDeviceProfile";
      /** description and groups as the caller sent them (undefined: kept); expectedVersion: refuse unless current. */
      data: { name: string; description?: unknown; groups?: unknown; expectedVersion?: number | null; at: string };
    }
  | { type: "MigrateDeviceProfile"; data: { name: string; mapping: ProfileMigrationMapping; at: string } }
  | { type: "SetDeviceProfileEnabled"; data: { name: string; enabled: boolean; at: string } }
  | { type: "RenameDeviceProfile"; data: { name: string; newName: string; at: string } }
  /** On the new name's stream: take over the profile a rename moves here. */
  | { type: "ReceiveRenamedProfile"; data: { newName: string; profile: DeviceProfile; liveArqUuids: string[]; at: string } };

export function decideLifecycle(command: LifecycleCommand, state: DeviceProfileState): DeviceProfileEvent[] {
  switch (command.type) {
    case "UpdateDeviceProfile":
      return update(command.data, state);
    case "MigrateDeviceProfile": {
      const { profile } = requireActive(state, command.data.name, undefined);
      if (profile.inline) return [];
      const { groups, changes, applied } = migrateGroups(profile.groups, command.data.mapping);
      if (changes.length === 0) return [];
      return [newVersion(profile, profile.description, validateGroups(groups), command.data.at, applied)];
    }
    case "SetDeviceProfileEnabled": {
      const { profile } = requireActive(state, command.data.name, undefined);
      if (profile.enabled === command.data.enabled) return [];
      const data = { uuid: profile.uuid, name: profile.name, at: command.data.at };
      return [command.data.enabled ? { type: "DeviceProfileEnabled", data } : { type: "DeviceProfileDisabled", data }];
    }
    case "RenameDeviceProfile": {
      const { profile } = requireActive(state, command.data.name, undefined);
      refuseInline(profile, "renamed");
      const newName = validateProfileName(command.data.newName, "newName");
      if (newName === profile.name) throw new DomainError("BAD_USER_INPUT", `The profile is already named ${newName}.`, "newName");
      return [{ type: "DeviceProfileRenamed", data: { uuid: profile.uuid, name: profile.name, newName, at: command.data.at } }];
    }
    case "ReceiveRenamedProfile": {
      const { newName, profile: p, liveArqUuids, at } = command.data;
      if (state.status === "active") throw new DomainError("CONFLICT", `A device_profile with name ${newName} already exists.`, "newName");
      return [
        {
          type: "DeviceProfileRenamedFrom",
          data: {
            uuid: p.uuid,
            name: newName,
            previousName: p.name,
            description: p.description,
            groups: p.groups,
            version: p.version,
            enabled: p.enabled,
            createdAt: p.createdAt,
            liveArqUuids,
            at,
          },
        },
      ];
    }
  }
}

function update(data: Extract<LifecycleCommand, { type: "UpdateDeviceProfile" }>["data"], state: DeviceProfileState): DeviceProfileEvent[] {
  const { profile } = requireActive(state, data.name, undefined);
  refuseInline(profile, "updated");
  if (data.description === undefined && data.groups === undefined) {
    throw new DomainError("BAD_USER_INPUT", "Give the new description, the new groups, or both.", "groups");
  }
  if (data.expectedVersion !== undefined && data.expectedVersion !== null && data.expectedVersion !== profile.version) {
    throw new DomainError("CONFLICT", `Device profile ${profile.name} is at version ${profile.version}, not ${data.expectedVersion}: read it again.`, "expectedVersion", {
      version: profile.version,
    });
  }
  const description = data.description === undefined ? profile.description : validateDescription(data.description);
  const groups = data.groups === undefined ? profile.groups : validateGroups(data.groups);
  // The same content again is no new version: the update is already in effect.
  if (description === profile.description && JSON.stringify(groups) === JSON.stringify(profile.groups)) return [];
  return [newVersion(profile, description, groups, data.at, null)];
}

function newVersion(p: DeviceProfile, description: string | null, groups: DeviceProfile["groups"], at: string, migration: ProfileMigrationMapping | null): DeviceProfileEvent {
  return { type: "DeviceProfileUpdated", data: { uuid: p.uuid, name: p.name, version: p.version + 1, description, groups, at, migration } };
}

/** An inline profile is named after its groups: it changes only with the specs it stands for. */
function refuseInline(profile: DeviceProfile, what: string): void {
  if (profile.inline) {
    throw new DomainError("BAD_USER_INPUT", `Device profile ${profile.name} stands for inline accelerator specs and is named after them; it cannot be ${what}.`, "name");
  }
}

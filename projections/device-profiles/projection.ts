/**
 * device-profiles: profiles by name and by uuid, listed in creation order, and each version.
 *
 * Keys (all under the hash tag `{device-profiles}`):
 *   :profile:<name>          hash  uuid name description groups createdAt updatedAt version enabled
 *                                  inline position (groups: the current version's, one JSON field,
 *                                  so each group keeps its keys' order)
 *   :uuid:<uuid>             hash  name (the profile that holds the uuid)
 *   :all                     zset  profile names by the position that created them; a profile
 *                                  deleted and created again, or renamed, moves to its new position.
 *                                  Inline profiles (os-acc) are not in it: nobody lists them.
 *   :version:<uuid>:<n>      hash  version description groups createdAt migration: version n as made
 */
import type { DeviceProfileEvent, ProfileGroup, ProfileMigrationMapping } from "../../src/domain/device-profiles/events.js";
import type { DeviceProfileView } from "../../src/domain/device-profiles/view.js";
import type { RecordedEvent, Recorded } from "../../src/infra/eventstore/port.js";
import type { Write } from "../../src/infra/readstore/port.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import { keys, score } from "../shared/keys.js";

export const name = "device-profiles";
export const k = keys(name);

/** The stored doc: the profile, and the log position of the event that created it (for ordering). */
export type StoredProfile = DeviceProfileView & { position: string };

export const versionKey = (uuid: string, version: number) => k("version", `${uuid}:${version}`);

export const eventTypes = [
  "DeviceProfileCreated",
  "DeviceProfileDeleted",
  "DeviceProfileUpdated",
  "DeviceProfileDisabled",
  "DeviceProfileEnabled",
  "DeviceProfileRenamed",
  "DeviceProfileRenamedFrom",
] as const;

export function project(event: RecordedEvent): Write[] {
  const e = event as Recorded<DeviceProfileEvent>;
  switch (e.type) {
    case "DeviceProfileCreated": {
      const d = e.data;
      const inline = d.inline === true;
      const fields = { uuid: d.uuid, name: d.name, description: d.description, groups: d.groups, createdAt: d.createdAt, updatedAt: null, version: 1, enabled: true, inline };
      return [
        { op: "put", key: k("profile", d.name), fields: { ...fields, position: e.position.toString() } },
        { op: "put", key: k("uuid", d.uuid), fields: { name: d.name } },
        ...(inline ? [] : [{ op: "zadd", key: k("all"), member: d.name, score: score(e.position) } as const]),
        versionDoc(d.uuid, 1, d.description, d.groups, d.createdAt, null),
      ];
    }
    case "DeviceProfileDeleted": {
      const d = e.data;
      const versions = Array.from({ length: d.version ?? 1 }, (_, i) => ({ op: "del", key: versionKey(d.uuid, i + 1) }) as const);
      return [
        { op: "del", key: k("profile", d.name) },
        { op: "del", key: k("uuid", d.uuid) },
        { op: "zrem", key: k("all"), member: d.name },
        ...versions,
      ];
    }
    case "DeviceProfileUpdated": {
      const d = e.data;
      return [
        { op: "put", key: k("profile", d.name), fields: { description: d.description, groups: d.groups, version: d.version, updatedAt: d.at } },
        versionDoc(d.uuid, d.version, d.description, d.groups, d.at, d.migration),
      ];
    }
    case "DeviceProfileDisabled":
    case "DeviceProfileEnabled":
      return [{ op: "put", key: k("profile", e.data.name), fields: { enabled: e.type === "DeviceProfileEnabled", updatedAt: e.data.at } }];
    case "DeviceProfileRenamed":
      // The uuid's entry moves with DeviceProfileRenamedFrom, appended in the same sequence.
      return [
        { op: "del", key: k("profile", e.data.name) },
        { op: "zrem", key: k("all"), member: e.data.name },
      ];
    case "DeviceProfileRenamedFrom": {
      const d = e.data;
      const fields = { uuid: d.uuid, name: d.name, description: d.description, groups: d.groups, createdAt: d.createdAt, updatedAt: d.at, version: d.version, enabled: d.enabled, inline: false };
      return [
        { op: "put", key: k("profile", d.name), fields: { ...fields, position: e.position.toString() } },
        { op: "put", key: k("uuid", d.uuid), fields: { name: d.name } },
        { op: "zadd", key: k("all"), member: d.name, score: score(e.position) },
      ];
    }
    default:
      return [];
  }
}

function versionDoc(uuid: string, version: number, description: string | null, groups: ProfileGroup[], createdAt: string, migration: ProfileMigrationMapping | null): Write {
  return { op: "put", key: versionKey(uuid, version), fields: { version, description, groups, createdAt, migration } };
}

export const projection: Projection = { name, eventTypes, project };

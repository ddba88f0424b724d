/**
 * device-profiles: profiles by name and by uuid, listed in creation order.
 *
 * Keys (all under the hash tag `{device-profiles}`):
 *   :profile:<name>   hash  uuid name description groups createdAt updatedAt position
 *                           (groups is one JSON field, so each group keeps its keys' order)
 *   :uuid:<uuid>      hash  name (the profile that holds the uuid)
 *   :all              zset  profile names by the position that created them; a profile deleted
 *                           and created again moves to its new position
 */
import type { DeviceProfileEvent, ProfileGroup } from "../src/domain/device-profiles/events.js";
import type { RecordedEvent } from "../src/eventstore/port.js";
import type { ReadStore, Write } from "../src/readstore/port.js";
import { keys, score, type Projection, type Recorded } from "../src/readstore/projection.js";

export const name = "device-profiles";
const k = keys(name);

export type DeviceProfileView = {
  uuid: string;
  name: string;
  description: string | null;
  /** Each group as the operator wrote it, keys in their original order. */
  groups: ProfileGroup[];
  createdAt: string;
  updatedAt: string | null;
  /** Log position of the event that created it (decimal string). */
  position: string;
};

export const eventTypes = ["DeviceProfileCreated", "DeviceProfileDeleted"] as const;

export function project(event: RecordedEvent): Write[] {
  const e = event as Recorded<DeviceProfileEvent>;
  switch (e.type) {
    case "DeviceProfileCreated": {
      const d = e.data;
      return [
        {
          op: "put",
          key: k("profile", d.name),
          fields: {
            uuid: d.uuid,
            name: d.name,
            description: d.description,
            groups: d.groups,
            createdAt: d.createdAt,
            updatedAt: null,
            position: e.position.toString(),
          },
        },
        { op: "put", key: k("uuid", d.uuid), fields: { name: d.name } },
        { op: "zadd", key: k("all"), member: d.name, score: score(e.position) },
      ];
    }
    case "DeviceProfileDeleted": {
      const d = e.data;
      return [
        { op: "del", key: k("profile", d.name) },
        { op: "del", key: k("uuid", d.uuid) },
        { op: "zrem", key: k("all"), member: d.name },
      ];
    }
    default:
      return [];
  }
}

export const projection: Projection = { name, eventTypes, project };

// ---- queries -------------------------------------------------------------------------------

/** All profiles, or those named (unknown names are left out), in creation order. */
export async function listProfiles(store: ReadStore, names?: readonly string[]): Promise<DeviceProfileView[]> {
  const wanted = names ? [...new Set(names)] : (await store.getMembers([k("all")]))[0]!;
  const docs = (await store.getDocs(wanted.map((n) => k("profile", n)))).filter((d): d is DeviceProfileView => d !== null) as DeviceProfileView[];
  if (names) docs.sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
  return docs;
}

export async function getProfilesByName(store: ReadStore, names: readonly string[]): Promise<Array<DeviceProfileView | null>> {
  return (await store.getDocs(names.map((n) => k("profile", n)))) as Array<DeviceProfileView | null>;
}

export async function getProfileByName(store: ReadStore, profileName: string): Promise<DeviceProfileView | null> {
  return (await getProfilesByName(store, [profileName]))[0]!;
}

export async function getProfileByUuid(store: ReadStore, uuid: string): Promise<DeviceProfileView | null> {
  const [ref] = await store.getDocs([k("uuid", uuid)]);
  if (!ref) return null;
  const profile = await getProfileByName(store, ref.name as string);
  // A uuid claimed by a profile that was deleted and re-created with another uuid is not its uuid.
  return profile && profile.uuid === uuid ? profile : null;
}

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
import type { DeviceProfileEvent } from "../../src/domain/device-profiles/events.js";
import type { DeviceProfileView } from "../../src/domain/device-profiles/view.js";
import type { RecordedEvent, Recorded } from "../../src/infra/eventstore/port.js";
import type { Write } from "../../src/infra/readstore/port.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import { keys, score } from "../shared/keys.js";

export const name = "device-profiles";
export const k = keys(name);

/** The stored doc: the profile, and the log position of the event that created it (for ordering). */
export type StoredProfile = DeviceProfileView & { position: string };

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

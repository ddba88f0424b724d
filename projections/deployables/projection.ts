/**
 * deployables: every deployable, findable by host, resource provider, device, name and bitstream
 * (the `deployables(filter)` query, Placement-style lookups by RP uuid, and what uses a bitstream).
 * It keeps its own copy of the deployable docs, so it can be rebuilt without device-tree.
 *
 * Keys (all under the hash tag `{deployables}`):
 *   :deployable:<uuid>, :attrs:<uuid>, :attr-order:<uuid>   see shared/deployables.ts
 *   :all                         zset  deployable uuids by the position that added them
 *   :by-host|by-rp|by-device|by-name|by-bitstream   family (hash uuid -> value) and
 *   :by-<f>:<value>              zset  the deployables with that value, in the order added
 *   :programming:<uuid>          hash  the region's programming request in flight (requestId,
 *                                      bitstreamId, bitstreamName, checksum, functionId, requestedBy, requestedAt)
 *   :by-programming              family: deployables by the bitstream they are being programmed with
 *   :last-programming:<uuid>     hash  how the last request ended (requestId, bitstreamId, outcome,
 *                                      reason, command, durationMs, at)
 */
import type { InventoryEvent } from "../../src/domain/events.js";
import type { RecordedEvent, Recorded } from "../../src/infra/eventstore/port.js";
import type { Write } from "../../src/infra/readstore/port.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import { DEPLOYABLE_EVENTS, deployableWrites } from "../shared/deployables.js";
import { indexFamilies, keys, score } from "../shared/keys.js";

export const name = "deployables";
export const k = keys(name);

export const FAMILIES = { hostname: "by-host", rpUuid: "by-rp", deviceUuid: "by-device", name: "by-name", bitstreamId: "by-bitstream" } as const;
const { orderKey: ORDER_KEY, file } = indexFamilies(k, FAMILIES, "all");
const PROGRAMMING = k("by-programming");

export const PROGRAMMING_EVENTS = ["RegionProgrammingRequested", "RegionProgrammed", "RegionProgrammingFailed", "RegionProgrammingAbandoned"] as const;
export const eventTypes = [...DEPLOYABLE_EVENTS, ...PROGRAMMING_EVENTS];

const fileProgramming = (deployableUuid: string, bitstreamId: string | null): Write => ({
  op: "index",
  index: PROGRAMMING,
  member: deployableUuid,
  value: bitstreamId,
  order: ORDER_KEY,
});

export function project(event: RecordedEvent): Write[] {
  const e = event as Recorded<InventoryEvent>;
  const writes = deployableWrites(k, e);
  switch (e.type) {
    case "DeployableAdded": {
      const d = e.data;
      writes.push(
        { op: "zadd", key: ORDER_KEY, member: d.deployableUuid, score: score(e.position), nx: true },
        file(d.deployableUuid, "hostname", d.hostname),
        file(d.deployableUuid, "rpUuid", d.rpUuid),
        file(d.deployableUuid, "deviceUuid", d.deviceUuid),
        file(d.deployableUuid, "name", d.name),
      );
      // Reports add deployables running nothing known: filed by bitstream once programmed.
      if (d.bitstreamId !== null) writes.push(file(d.deployableUuid, "bitstreamId", d.bitstreamId));
      break;
    }
    case "DeployableChanged":
      if (e.data.changes.bitstreamId !== undefined) writes.push(file(e.data.deployableUuid, "bitstreamId", e.data.changes.bitstreamId));
      break;
    case "DeployableRemoved": {
      const u = e.data.deployableUuid;
      writes.push(
        file(u, "hostname", null),
        file(u, "rpUuid", null),
        file(u, "deviceUuid", null),
        file(u, "name", null),
        file(u, "bitstreamId", null),
        fileProgramming(u, null),
        { op: "del", key: k("programming", u) },
        { op: "del", key: k("last-programming", u) },
        { op: "zrem", key: ORDER_KEY, member: u },
      );
      break;
    }
    case "RegionProgrammingRequested": {
      const d = e.data;
      const b = d.bitstream;
      writes.push(
        {
          op: "put",
          key: k("programming", d.deployableUuid),
          fields: { requestId: d.requestId, bitstreamId: b.id, bitstreamName: b.name, checksum: b.checksum, functionId: b.functionId, requestedBy: d.requestedBy, requestedAt: d.at },
        },
        fileProgramming(d.deployableUuid, b.id),
      );
      break;
    }
    case "RegionProgrammed":
    case "RegionProgrammingFailed":
    case "RegionProgrammingAbandoned": {
      const d = e.data;
      const outcome = e.type === "RegionProgrammed" ? "PROGRAMMED" : e.type === "RegionProgrammingFailed" ? "FAILED" : "ABANDONED";
      const bitstreamId = e.type === "RegionProgrammed" ? e.data.bitstream.id : e.data.bitstreamId;
      const reason = e.type === "RegionProgrammed" ? null : e.data.reason;
      const command = e.type === "RegionProgrammingAbandoned" ? null : e.data.command;
      const durationMs = e.type === "RegionProgrammingAbandoned" ? null : e.data.durationMs;
      const late = e.type === "RegionProgrammingAbandoned" ? false : e.data.late;
      writes.push({
        op: "put",
        key: k("last-programming", d.deployableUuid),
        fields: { requestId: d.requestId, bitstreamId, outcome, reason, command, durationMs, late, at: d.at },
      });
      // A late report closes nothing: the request in flight, if any, is another one.
      if (!late) writes.push({ op: "del", key: k("programming", d.deployableUuid) }, fileProgramming(d.deployableUuid, null));
      break;
    }
    default:
      break;
  }
  return writes;
}

export const projection: Projection = { name, eventTypes, project };

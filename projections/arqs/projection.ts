/**
 * arqs: accelerator requests, by uuid and filtered lists in creation order.
 *
 * Keys (all under the hash tag `{arqs}`):
 *   :arq:<uuid>          hash  created {uuid deviceProfileName deviceProfileUuid deviceProfileGroupId
 *                              deviceProfileVersion group createdAt}, projectId, binding {hostname deviceRpUuid instanceUuid}
 *                              | null, status {state handle bindFailureReason revision position
 *                              updatedAt} (handle: {attachHandleType attachHandleUuid
 *                              attachHandleInfo deployableUuid} | null)
 *                              (fields grouped by what changes together: an event writes 1 to 4),
 *                              eviction {deviceUuid taintKey reason deadline requestedAt revision position} | null
 *                              (the notice leaves status alone: the view takes revision and position from
 *                              whichever of the two is later)
 *   :all                 zset  ARQ uuids by the position of ArqCreated
 *   :by-state|by-instance|by-host|by-project|by-profile|resolved     family (hash uuid -> value) and
 *   :by-<f>:<value>      zset  the ARQs with that value, in creation order
 *                              (`resolved:yes` holds the ARQs in BOUND or BIND_FAILED)
 */
import type { ArqView } from "../../src/domain/arqs/view.js";
import type { ArqEvent } from "../../src/domain/events.js";
import { streamPrefix, type ArqState } from "../../src/domain/shared/types.js";
import type { RecordedEvent, Recorded } from "../../src/infra/eventstore/port.js";
import type { Write } from "../../src/infra/readstore/port.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import { indexFamilies, keys, score } from "../shared/keys.js";

export const name = "arqs";
export const k = keys(name);

export const FAMILIES = {
  state: "by-state",
  instanceUuid: "by-instance",
  hostname: "by-host",
  projectId: "by-project",
  deviceProfileName: "by-profile",
  resolved: "resolved",
} as const;
const { orderKey: ORDER_KEY, file } = indexFamilies(k, FAMILIES, "all");
const FAMILY_FIELDS = Object.keys(FAMILIES) as Array<keyof typeof FAMILIES>;

export const eventTypes = ["ArqCreated", "ArqBindStarted", "ArqBound", "ArqBindFailed", "ArqUnbound", "ArqDeleted", "ArqEvictionRequested"] as const;

export function project(event: RecordedEvent): Write[] {
  const e = event as Recorded<ArqEvent>;
  const u = e.data.arqUuid;
  /** Every event rewrites `status` whole: state, handle and reason are known from the event alone. */
  const doc = (state: ArqState, fields: Record<string, unknown>, handle: StoredArq["status"]["handle"] = null, reason: string | null = null): Write => {
    // `fields` is a fresh literal at every call: status joins it last, without a copy.
    fields.status = { state, handle, bindFailureReason: reason, revision: e.revision, position: e.position.toString(), updatedAt: e.type === "ArqCreated" ? null : e.data.at };
    return { op: "put", key: k("arq", u), fields };
  };
  switch (e.type) {
    case "ArqCreated": {
      const d = e.data;
      return [
        doc("INITIAL", {
          created: {
            uuid: u,
            deviceProfileName: d.deviceProfileName,
            deviceProfileUuid: d.deviceProfileUuid,
            deviceProfileGroupId: d.deviceProfileGroupId,
            deviceProfileVersion: d.deviceProfileVersion ?? 1,
            group: d.group,
            createdAt: d.at,
          },
          projectId: d.projectId,
          binding: null,
        }),
        { op: "zadd", key: ORDER_KEY, member: u, score: score(e.position) },
        file(u, "state", "INITIAL"),
        file(u, "deviceProfileName", d.deviceProfileName),
        file(u, "projectId", d.projectId),
      ];
    }
    case "ArqBindStarted": {
      const d = e.data;
      return [
        doc("BIND_STARTED", { projectId: d.projectId, eviction: null, binding: { hostname: d.hostname, deviceRpUuid: d.deviceRpUuid, instanceUuid: d.instanceUuid } }),
        file(u, "state", "BIND_STARTED"),
        file(u, "hostname", d.hostname),
        file(u, "instanceUuid", d.instanceUuid),
        file(u, "projectId", d.projectId),
        file(u, "resolved", null),
      ];
    }
    case "ArqBound": {
      const d = e.data;
      return [
        doc(
          "BOUND",
          { binding: { hostname: d.hostname, deviceRpUuid: d.deviceRpUuid, instanceUuid: d.instanceUuid } },
          { attachHandleType: d.attachHandleType, attachHandleUuid: d.attachHandleUuid, attachHandleInfo: d.attachHandleInfo, deployableUuid: d.deployableUuid, alternative: d.alternative ?? null },
        ),
        file(u, "state", "BOUND"),
        file(u, "hostname", d.hostname),
        file(u, "instanceUuid", d.instanceUuid),
        file(u, "resolved", "yes"),
      ];
    }
    case "ArqBindFailed":
      // The binding stays (Nova deletes the ARQs by instance); the handle, if any, is gone.
      return [doc("BIND_FAILED", {}, null, e.data.reason), file(u, "state", "BIND_FAILED"), file(u, "resolved", "yes")];
    case "ArqUnbound":
      // project_id is kept (cyborg-reference 2.3, Unbind).
      return [
        doc("UNBOUND", { binding: null, eviction: null }),
        file(u, "state", "UNBOUND"),
        file(u, "hostname", null),
        file(u, "instanceUuid", null),
        file(u, "resolved", null),
      ];
    case "ArqDeleted":
      return [
        { op: "del", key: k("arq", u) },
        ...FAMILY_FIELDS.map((f) => file(u, f, null)),
        { op: "zrem", key: ORDER_KEY, member: u },
      ];
    case "ArqEvictionRequested": {
      const { deviceUuid, taintKey, reason, deadline, at } = e.data;
      const eviction: StoredArq["eviction"] = { deviceUuid, taintKey, reason, deadline, requestedAt: at, revision: e.revision, position: e.position.toString() };
      return [{ op: "put", key: k("arq", u), fields: { eviction } }];
    }
    default:
      return [];
  }
}

/** ArqDeleted ends an ARQ's stream (the decider takes nothing after it) and removes all it filed. */
export const ends = { prefix: streamPrefix.arq, types: ["ArqDeleted"] } as const;

export const projection: Projection = { name, eventTypes, project, ends };

/** The stored doc: fields grouped by what changes together. */
export interface StoredArq {
  created: Pick<ArqView, "uuid" | "deviceProfileName" | "deviceProfileUuid" | "deviceProfileGroupId" | "deviceProfileVersion" | "group" | "createdAt">;
  projectId: string | null;
  binding: Pick<ArqView, "hostname" | "deviceRpUuid" | "instanceUuid"> | null;
  status: {
    state: ArqState;
    handle: (Pick<ArqView, "attachHandleType" | "attachHandleUuid" | "attachHandleInfo" | "deployableUuid"> & { alternative?: number | null }) | null;
    bindFailureReason: string | null;
    revision: number;
    position: string;
    updatedAt: string | null;
  };
  /** Absent in docs written before eviction notices. */
  eviction?: (NonNullable<ArqView["eviction"]> & { revision: number; position: string }) | null;
}

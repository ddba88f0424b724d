/**
 * arqs: accelerator requests, by uuid and filtered lists in creation order.
 *
 * Keys (all under the hash tag `{arqs}`):
 *   :arq:<uuid>          hash  created {uuid deviceProfileName deviceProfileUuid deviceProfileGroupId
 *                              createdAt}, projectId, binding {hostname deviceRpUuid instanceUuid}
 *                              | null, status {state handle bindFailureReason revision position
 *                              updatedAt} (handle: {attachHandleType attachHandleUuid
 *                              attachHandleInfo deployableUuid} | null)
 *                              (fields grouped by what changes together: an event writes 1 to 4)
 *   :all                 zset  ARQ uuids by the position of ArqCreated
 *   :by-state|by-instance|by-host|by-project|by-profile|resolved     family (hash uuid -> value) and
 *   :by-<f>:<value>      zset  the ARQs with that value, in creation order
 *                              (`resolved:yes` holds the ARQs in BOUND or BIND_FAILED)
 */
import type { ArqEvent } from "../src/domain/events.js";
import type { ArqState, AttachHandleType, JsonObject } from "../src/domain/shared/types.js";
import type { RecordedEvent } from "../src/eventstore/port.js";
import type { ReadStore, Write } from "../src/readstore/port.js";
import { indexFamilies, keys, score, type Projection, type Recorded } from "../src/readstore/projection.js";
import { pageOf, type Page } from "./shared/page.js";

export const name = "arqs";
const k = keys(name);

export type ArqView = {
  uuid: string;
  state: ArqState;
  deviceProfileName: string;
  deviceProfileUuid: string;
  deviceProfileGroupId: number;
  hostname: string | null;
  deviceRpUuid: string | null;
  instanceUuid: string | null;
  projectId: string | null;
  /** The three attach-handle fields are null unless the ARQ is BOUND. */
  attachHandleType: AttachHandleType | null;
  attachHandleUuid: string | null;
  attachHandleInfo: JsonObject | null;
  deployableUuid: string | null;
  /** Why the last bind failed, while BIND_FAILED. */
  bindFailureReason: string | null;
  /** Revision of the arq-<uuid> stream this view reflects. */
  revision: number;
  /** Log position of the last event applied to this ARQ (decimal string). */
  position: string;
  createdAt: string;
  updatedAt: string | null;
};

export interface ArqFilter {
  instanceUuid?: string | null;
  state?: string | null;
  hostname?: string | null;
  deviceProfileName?: string | null;
  projectId?: string | null;
  /** Only ARQs whose bind resolved: BOUND or BIND_FAILED. */
  resolvedOnly?: boolean | null;
}

const FAMILIES = {
  state: "by-state",
  instanceUuid: "by-instance",
  hostname: "by-host",
  projectId: "by-project",
  deviceProfileName: "by-profile",
  resolved: "resolved",
} as const;
const { orderKey: ORDER_KEY, file } = indexFamilies(k, FAMILIES, "all");
const FAMILY_FIELDS = Object.keys(FAMILIES) as Array<keyof typeof FAMILIES>;

export const eventTypes = ["ArqCreated", "ArqBindStarted", "ArqBound", "ArqBindFailed", "ArqUnbound", "ArqDeleted"] as const;

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
          created: { uuid: u, deviceProfileName: d.deviceProfileName, deviceProfileUuid: d.deviceProfileUuid, deviceProfileGroupId: d.deviceProfileGroupId, createdAt: d.at },
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
        doc("BIND_STARTED", { projectId: d.projectId, binding: { hostname: d.hostname, deviceRpUuid: d.deviceRpUuid, instanceUuid: d.instanceUuid } }),
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
          { attachHandleType: d.attachHandleType, attachHandleUuid: d.attachHandleUuid, attachHandleInfo: d.attachHandleInfo, deployableUuid: d.deployableUuid },
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
        doc("UNBOUND", { binding: null }),
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
    default:
      return [];
  }
}

export const projection: Projection = { name, eventTypes, project };

/** The stored doc: fields grouped by what changes together. */
interface StoredArq {
  created: Pick<ArqView, "uuid" | "deviceProfileName" | "deviceProfileUuid" | "deviceProfileGroupId" | "createdAt">;
  projectId: string | null;
  binding: Pick<ArqView, "hostname" | "deviceRpUuid" | "instanceUuid"> | null;
  status: {
    state: ArqState;
    handle: Pick<ArqView, "attachHandleType" | "attachHandleUuid" | "attachHandleInfo" | "deployableUuid"> | null;
    bindFailureReason: string | null;
    revision: number;
    position: string;
    updatedAt: string | null;
  };
}

// ---- queries -------------------------------------------------------------------------------

function view(doc: Record<string, unknown> | null): ArqView | null {
  if (!doc) return null;
  const a = doc as unknown as StoredArq;
  const s = a.status;
  const handle = s.state === "BOUND" ? s.handle : null;
  return {
    ...a.created,
    state: s.state,
    hostname: a.binding?.hostname ?? null,
    deviceRpUuid: a.binding?.deviceRpUuid ?? null,
    instanceUuid: a.binding?.instanceUuid ?? null,
    projectId: a.projectId,
    attachHandleType: handle?.attachHandleType ?? null,
    attachHandleUuid: handle?.attachHandleUuid ?? null,
    attachHandleInfo: handle?.attachHandleInfo ?? null,
    deployableUuid: s.handle?.deployableUuid ?? null,
    bindFailureReason: s.bindFailureReason,
    revision: s.revision,
    position: s.position,
    createdAt: a.created.createdAt,
    updatedAt: s.updatedAt,
  };
}

export async function getArqs(store: ReadStore, uuids: readonly string[]): Promise<Array<ArqView | null>> {
  return (await store.getDocs(uuids.map((u) => k("arq", u)))).map(view);
}

/** ARQs in creation order; filters combine (AND). */
export async function listArqs(store: ReadStore, filter: ArqFilter, first: number, after?: string): Promise<Page<ArqView>> {
  const index: string[] = [];
  const add = (field: keyof typeof FAMILIES, v: string | null | undefined) => {
    if (v !== undefined && v !== null) index.push(k(`${FAMILIES[field]}:${v}`));
  };
  add("instanceUuid", filter.instanceUuid);
  add("hostname", filter.hostname);
  add("state", filter.state);
  add("deviceProfileName", filter.deviceProfileName);
  add("projectId", filter.projectId);
  if (filter.resolvedOnly) add("resolved", "yes");
  return pageOf(store, index.length ? index : [k("all")], first, after, (u) => getArqs(store, u));
}

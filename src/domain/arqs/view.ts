/**
 * An ARQ as clients see it. A mutation answers it from the log, a query from the arqs read model:
 * one shape, so GraphQL and REST never tell two stories about one ARQ.
 */
import type { AttachHandleType, JsonObject } from "../shared/types.js";
import type { Arq } from "./arq.js";

/** The ARQ's own fields, and what it holds as Cyborg shows it. */
export type ArqView = Pick<
  Arq,
  | "uuid"
  | "state"
  | "deviceProfileName"
  | "deviceProfileUuid"
  | "deviceProfileGroupId"
  | "deviceProfileVersion"
  | "group"
  | "hostname"
  | "deviceRpUuid"
  | "instanceUuid"
  | "projectId"
  | "bindFailureReason"
  | "eviction"
  | "createdAt"
  | "updatedAt"
> & {
  /** The attach fields are set only in state BOUND (as Cyborg), null otherwise. */
  attachHandleType: AttachHandleType | null;
  attachHandleUuid: string | null;
  attachHandleInfo: JsonObject | null;
  deployableUuid: string | null;
  /** BOUND with a group that lists alternatives: which way it got (0: its own request, i: the i-th of accel:alternatives); null otherwise. */
  alternative: number | null;
  /** Revision of the arq-<uuid> stream this view reflects. */
  revision: number;
  /** Log position of the ARQ's last event (decimal string). */
  position: string;
};

export function arqView(arq: Arq, revision: number, position: bigint): ArqView {
  const bound = arq.state === "BOUND" ? arq.attachment : null;
  return {
    uuid: arq.uuid,
    state: arq.state,
    deviceProfileName: arq.deviceProfileName,
    deviceProfileUuid: arq.deviceProfileUuid,
    deviceProfileGroupId: arq.deviceProfileGroupId,
    deviceProfileVersion: arq.deviceProfileVersion,
    group: { ...arq.group },
    hostname: arq.hostname,
    deviceRpUuid: arq.deviceRpUuid,
    instanceUuid: arq.instanceUuid,
    projectId: arq.projectId,
    attachHandleType: bound?.handleType ?? null,
    attachHandleUuid: bound?.handleUuid ?? null,
    attachHandleInfo: bound ? { ...bound.handleInfo } : null,
    deployableUuid: bound?.deployableUuid ?? null,
    alternative: bound?.alternative ?? null,
    bindFailureReason: arq.state === "BIND_FAILED" ? arq.bindFailureReason : null,
    eviction: arq.eviction ? { ...arq.eviction } : null,
    revision,
    position: position.toString(),
    createdAt: arq.createdAt,
    updatedAt: arq.updatedAt,
  };
}

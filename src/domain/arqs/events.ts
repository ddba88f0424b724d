/** Events of stream `arq-<uuid>`: one accelerator request's state machine (cyborg-reference 2.2). */
import type { AttachHandleType, JsonObject } from "../shared/types.js";
import type { ProfileGroup } from "../device-profiles/events.js";

export interface ArqCreated {
  type: "ArqCreated";
  data: {
    arqUuid: string;
    deviceProfileName: string;
    deviceProfileUuid: string;
    deviceProfileGroupId: number;
    /** The profile's version the ARQ was made from (absent in events written before profiles had versions: 1). */
    deviceProfileVersion?: number;
    /** A copy of the profile group, so the ARQ outlives changes to the profile's stream. */
    group: ProfileGroup;
    projectId: string | null;
    at: string;
  };
}
export interface ArqBindStarted {
  type: "ArqBindStarted";
  data: { arqUuid: string; hostname: string; deviceRpUuid: string; instanceUuid: string; projectId: string | null; at: string };
}
export interface ArqBound {
  type: "ArqBound";
  data: {
    arqUuid: string;
    hostname: string;
    instanceUuid: string;
    deviceRpUuid: string;
    deployableUuid: string;
    attachHandleUuid: string;
    attachHandleType: AttachHandleType;
    attachHandleInfo: JsonObject;
    /** Which of the group's ways the provider met (0: its own request, i: the i-th of accel:alternatives); absent for a group without alternatives. */
    alternative?: number;
    at: string;
  };
}
export interface ArqBindFailed {
  type: "ArqBindFailed";
  data: { arqUuid: string; instanceUuid: string | null; reason: string; at: string };
}
export interface ArqUnbound {
  type: "ArqUnbound";
  data: {
    arqUuid: string;
    /** What the ARQ held when it was unbound, so the binder can release it. */
    previousHostname: string | null;
    previousInstanceUuid: string | null;
    releasedHandleUuid: string | null;
    at: string;
  };
}
export interface ArqDeleted {
  type: "ArqDeleted";
  data: {
    arqUuid: string;
    deviceProfileName: string;
    deviceProfileUuid: string;
    previousHostname: string | null;
    previousInstanceUuid: string | null;
    releasedHandleUuid: string | null;
    at: string;
  };
}

/**
 * The device the ARQ holds carries a NoExecute taint: its holder is asked to move by `deadline`
 * (the ARQ keeps its handle; the device is DRAINED once every holder let go).
 */
export interface ArqEvictionRequested {
  type: "ArqEvictionRequested";
  /** instanceUuid: the instance the ARQ serves (null while none), for Nova's side of the story. */
  data: { arqUuid: string; instanceUuid: string | null; hostname: string; deviceUuid: string; taintKey: string; reason: string; deadline: string; at: string };
}

export type ArqEvent = ArqCreated | ArqBindStarted | ArqBound | ArqBindFailed | ArqUnbound | ArqDeleted | ArqEvictionRequested;

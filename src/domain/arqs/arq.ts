/** An accelerator request as its stream's events leave it (folded by the decider's `evolve`). */
import type { ProfileGroup } from "../device-profiles/events.js";
import type { ArqState, AttachHandleType, JsonObject } from "../shared/types.js";

export interface ArqAttachment {
  deployableUuid: string;
  handleUuid: string;
  handleType: AttachHandleType;
  handleInfo: JsonObject;
  /** Which of its group's ways the provider met (0: its own request, i: the i-th of accel:alternatives); absent for a group without alternatives. */
  alternative?: number;
}

export interface Arq {
  uuid: string;
  state: ArqState;
  deviceProfileName: string;
  deviceProfileUuid: string;
  deviceProfileGroupId: number;
  /** The profile's version the ARQ was made from; `group` is that version's group. */
  deviceProfileVersion: number;
  group: ProfileGroup;
  projectId: string | null;
  hostname: string | null;
  deviceRpUuid: string | null;
  instanceUuid: string | null;
  /** The handle recorded by ArqBound; kept after a failure from BOUND until unbind or delete. */
  attachment: ArqAttachment | null;
  bindFailureReason: string | null;
  /** The notice to move, while the ARQ holds a device with a NoExecute taint (eviction.ts). */
  eviction: ArqEviction | null;
  createdAt: string;
  updatedAt: string | null;
}

export type ArqStreamState =
  | { status: "absent" }
  | { status: "live"; arq: Arq }
  | { status: "deleted"; arq: Arq; deletedAt: string };

/** A notice to move (eviction.ts): the ARQ holds a device with a NoExecute taint. */
export interface ArqEviction {
  deviceUuid: string;
  taintKey: string;
  reason: string;
  /** ISO time by which the holder is asked to have released the device. */
  deadline: string;
  requestedAt: string;
}

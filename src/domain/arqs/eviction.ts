/**
 * Eviction notices: a NoExecute taint on a device asks each ARQ holding it to move. The notice is
 * recorded on the ARQ's stream (ArqEvictionRequested) with a deadline; the ARQ keeps its handle
 * until it is unbound or deleted, and the notice goes with it. An ARQ that no longer holds that
 * device (released, or bound elsewhere since) gets none, nor one whose profile group tolerates the
 * taint (accel:tolerations, as Kubernetes' NoExecute tolerations); a second notice for the same
 * taint is nothing new.
 */
import { tolerates, tolerationsOf } from "../shared/tolerations.js";
import type { Arq } from "./arq.js";
import type { ArqEvent } from "./events.js";

export interface EvictionRequest {
  arqUuid: string;
  hostname: string;
  deviceUuid: string;
  /** The resource providers of the device's deployables (an ARQ records its provider, not the device). */
  rpUuids: readonly string[];
  taintKey: string;
  /** The taint's value (a toleration may name it). */
  taintValue: string;
  reason: string;
  deadline: string;
  at: string;
}

export type EvictionCommand = { type: "RequestArqEviction"; data: EvictionRequest };

/** Whether the ARQ is bound (or being bound) to a provider of the device. */
export function holdsDevice(arq: Arq, hostname: string, rpUuids: readonly string[]): boolean {
  if (arq.state !== "BOUND" && arq.state !== "BIND_STARTED") return false;
  return arq.hostname === hostname && arq.deviceRpUuid !== null && rpUuids.includes(arq.deviceRpUuid);
}

export function decideEviction(arq: Arq, r: EvictionRequest): ArqEvent[] {
  if (!holdsDevice(arq, r.hostname, r.rpUuids)) return [];
  if (tolerates(tolerationsOf(arq.group), { key: r.taintKey, value: r.taintValue, effect: "NoExecute" })) return [];
  const e = arq.eviction;
  if (e && e.deviceUuid === r.deviceUuid && e.taintKey === r.taintKey) return [];
  const { arqUuid, hostname, deviceUuid, taintKey, reason, deadline, at } = r;
  return [{ type: "ArqEvictionRequested", data: { arqUuid, instanceUuid: arq.instanceUuid, hostname, deviceUuid, taintKey, reason, deadline, at } }];
}

import type { ArqCommand } from "../../../src/domain/arqs/decider.js";
import type { ArqEvent } from "../../../src/domain/arqs/events.js";
import type { ArqState } from "../../../src/domain/shared/types.js";

export const at = "2026-03-01T10:00:00.000Z";
export const later = "2026-03-01T10:05:00.000Z";
export const ARQ = "aaaaaaaa-0000-4000-8000-000000000001";
export const PROFILE = "dddddddd-0000-4000-8000-000000000001";
export const T1 = { hostname: "compute1", deviceRpUuid: "rp-1", instanceUuid: "vm-1" };
export const T2 = { hostname: "compute2", deviceRpUuid: "rp-2", instanceUuid: "vm-2" };
export const HANDLE = { deployableUuid: "dep-1", handleUuid: "h-1", handleType: "PCI" as const, handleInfo: { bus: "af", device: "00", domain: "0000", function: "0" } };

export const created: ArqEvent = {
  type: "ArqCreated",
  data: { arqUuid: ARQ, deviceProfileName: "dp1", deviceProfileUuid: PROFILE, deviceProfileGroupId: 0, group: { "resources:FPGA": "1" }, projectId: "p1", at },
};
export const bindStarted = (t = T1, when = at): ArqEvent => ({ type: "ArqBindStarted", data: { arqUuid: ARQ, ...t, projectId: "p1", at: when } });
export const bound = (t = T1, h = HANDLE): ArqEvent => ({
  type: "ArqBound",
  data: {
    arqUuid: ARQ,
    ...t,
    deployableUuid: h.deployableUuid,
    attachHandleUuid: h.handleUuid,
    attachHandleType: h.handleType,
    attachHandleInfo: h.handleInfo,
    at,
  },
});
export const failed = (reason = "no free handle"): ArqEvent => ({ type: "ArqBindFailed", data: { arqUuid: ARQ, instanceUuid: T1.instanceUuid, reason, at } });
export const unbound: ArqEvent = {
  type: "ArqUnbound",
  data: { arqUuid: ARQ, previousHostname: T1.hostname, previousInstanceUuid: T1.instanceUuid, releasedHandleUuid: HANDLE.handleUuid, at },
};

/** An event history that leaves the ARQ in each state. */
export const HISTORY: Record<Exclude<ArqState, "DELETING">, ArqEvent[]> = {
  INITIAL: [created],
  BIND_STARTED: [created, bindStarted()],
  BOUND: [created, bindStarted(), bound()],
  UNBOUND: [created, bindStarted(), bound(), unbound],
  BIND_FAILED: [created, bindStarted(), failed()],
};

export const commands = {
  startBind: (t = T2): ArqCommand => ({ type: "StartArqBind", data: { arqUuid: ARQ, ...t, at: later } }),
  complete: (t = T1, h = HANDLE): ArqCommand => ({ type: "CompleteArqBind", data: { arqUuid: ARQ, ...t, ...h, at: later } }),
  fail: (reason = "timeout", onlyFrom?: ArqState[]): ArqCommand => ({ type: "FailArqBind", data: { arqUuid: ARQ, reason, onlyFrom, at: later } }),
  unbind: (): ArqCommand => ({ type: "UnbindArq", data: { arqUuid: ARQ, at: later } }),
  delete: (): ArqCommand => ({ type: "DeleteArq", data: { arqUuid: ARQ, at: later } }),
};

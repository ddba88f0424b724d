/**
 * Events of the host stream for cleaning a device before its next tenant and qualifying it again
 * (cleaning.ts holds the rules). A device is cleaned when its last holder leaves, if the device or
 * a holder's profile group requires it; it is offered again once the clean and a health check pass.
 */

/** An operator says whether the device must be cleaned after each use (`required`). */
export interface DeviceCleaningRequirementSet {
  type: "DeviceCleaningRequirementSet";
  data: { hostname: string; deviceUuid: string; required: boolean; by: string; at: string };
}
/** The host's agent is to run its driver's clean step on the device; no bind takes it meanwhile. */
export interface DeviceCleaningRequested {
  type: "DeviceCleaningRequested";
  data: { hostname: string; deviceUuid: string; requestId: string; reason: string; at: string };
}
/** The clean step ran; `digest` sums up what it did (the driver's own account, hashed). The device is qualified next. */
export interface DeviceCleaned {
  type: "DeviceCleaned";
  data: { hostname: string; deviceUuid: string; requestId: string; digest: string; command: string[]; durationMs: number; at: string };
}
/**
 * The clean step failed (or no answer came in time); DeviceFailed follows in the same append. The
 * command line and duration are there when the agent ran a step (absent in events written before).
 */
export interface DeviceCleaningFailed {
  type: "DeviceCleaningFailed";
  data: { hostname: string; deviceUuid: string; requestId: string; reason: string; command?: string[] | null; durationMs?: number | null; at: string };
}
/** Cleaned and reported healthy again: the device is offered again. */
export interface DeviceQualified {
  type: "DeviceQualified";
  data: { hostname: string; deviceUuid: string; at: string };
}
/** The device is out of service until an operator has it cleaned again (repair): the reason says why. */
export interface DeviceFailed {
  type: "DeviceFailed";
  data: { hostname: string; deviceUuid: string; reason: string; at: string };
}

export type CleaningEvent = DeviceCleaningRequirementSet | DeviceCleaningRequested | DeviceCleaned | DeviceCleaningFailed | DeviceQualified | DeviceFailed;

export const CLEANING_EVENT_TYPES = [
  "DeviceCleaningRequirementSet",
  "DeviceCleaningRequested",
  "DeviceCleaned",
  "DeviceCleaningFailed",
  "DeviceQualified",
  "DeviceFailed",
] as const satisfies ReadonlyArray<CleaningEvent["type"]>;

/** Cyborg's value formats: timestamps, links, ARQ states and device statuses. */
import type { ArqState, DeviceStatus } from "../../domain/shared/types.js";

/**
 * WSME's datetime, as list and create responses give it: "2020-03-13T02:27:35+00:00" (Cyborg's
 * columns hold whole seconds), null stays null.
 */
export function wsmeTime(iso: string | null | undefined): string | null {
  return iso ? `${seconds(iso)}+00:00` : null;
}

/**
 * Python's str() of the datetime, as GET /device_profiles/{id} gives it: a space for the "T",
 * and a missing time becomes the string "None" (cyborg-reference 1.3).
 */
export function pythonStrTime(iso: string | null | undefined): string {
  return iso ? `${seconds(iso).replace("T", " ")}+00:00` : "None";
}

/** "2026-11-24T10:00:00.123Z" -> "2026-11-24T10:00:00" (UTC). */
function seconds(iso: string): string {
  return new Date(iso).toISOString().slice(0, 19);
}

export interface Link {
  href: string;
  rel: "self" | "bookmark";
}

/** Links always name /accelerator/, whichever prefix the request used (Cyborg's build_url). */
export function selfLink(publicUrl: string, resource: string, uuid: string): Link {
  return { href: `${publicUrl}/accelerator/v2/${resource}/${uuid}`, rel: "self" };
}

export function bookmarkLink(publicUrl: string, resource: string, uuid: string): Link {
  return { href: `${publicUrl}/accelerator/${resource}/${uuid}`, rel: "bookmark" };
}

export const ARQ_STATE: Readonly<Record<ArqState, string>> = {
  INITIAL: "Initial",
  BIND_STARTED: "BindStarted",
  BOUND: "Bound",
  UNBOUND: "Unbound",
  BIND_FAILED: "BindFailed",
  DELETING: "Deleting",
};

export const DEVICE_STATUS: Readonly<Record<DeviceStatus, string>> = { ENABLED: "enabled", MAINTAINING: "maintaining" };

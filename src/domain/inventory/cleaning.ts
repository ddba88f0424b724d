/**
 * Cleaning a device before its next tenant, and qualifying it again, on the host stream.
 * The rules:
 * - a device requires cleaning after use when an operator says so (DeviceCleaningRequirementSet),
 *   or when one of its holders since the last clean came from a profile group with
 *   `accel:clean_after_use=true` (the allocation records it);
 * - when the last holder leaves such a device, the same append requests the clean
 *   (DeviceCleaningRequested): no bind can take the device in between;
 * - the agent runs its driver's clean step and reports: cleaned (with a digest of what was done)
 *   makes the device QUALIFYING; failed makes it FAILED with the reason;
 * - a qualifying device is qualified by the next report of its host that shows it healthy (its
 *   health OK or WARNING); CRITICAL fails it; it is offered again only once qualified;
 * - a FAILED device is repaired by an operator asking for a clean again (RequestDeviceCleaning);
 *   a request that no agent answers within its time is closed as failed (AbandonDeviceCleaning).
 */
import { DomainError } from "../shared/types.js";
import { commandLine, duration, ranStep, text } from "./agent-report-fields.js";
import type { CleaningEvent } from "./cleaning-events.js";
import type { CleaningOutcome, DeviceCleaningState, DeviceNode, HostState } from "./host-tree.js";
import { cleaningRequestIdFor } from "./ids.js";

export const initialCleaning = (): DeviceCleaningState => ({
  required: false,
  dirty: false,
  inFlight: null,
  qualifyingSince: null,
  failed: null,
  last: null,
  requests: 0,
});

export type CleaningCommand =
  | { type: "SetDeviceCleaningRequired"; data: { hostname: string; deviceUuid: string; required: boolean; by: string; at: string } }
  | { type: "RequestDeviceCleaning"; data: { hostname: string; deviceUuid: string; reason: string; at: string } }
  | { type: "ReportDeviceCleaned"; data: { hostname: string; deviceUuid: string; requestId: string; digest: unknown; command: unknown; durationMs: unknown; at: string } }
  | { type: "ReportDeviceCleaningFailed"; data: { hostname: string; deviceUuid: string; requestId: string; reason: unknown; command?: unknown; durationMs?: unknown; at: string } }
  | { type: "AbandonDeviceCleaning"; data: { hostname: string; deviceUuid: string; requestId: string; reason: string; at: string } };

/** Why a device takes no new bind while its cleaning loop holds it; null when it does not. */
export function cleaningHold(device: DeviceNode): string | null {
  const c = device.cleaning;
  if (c.failed) return `Device ${device.uuid} is FAILED (${c.failed.reason}); an operator must have it cleaned again`;
  if (c.inFlight) return `Device ${device.uuid} is being cleaned (request ${c.inFlight.requestId})`;
  if (c.qualifyingSince) return `Device ${device.uuid} was cleaned and waits for a healthy report (QUALIFYING)`;
  return null;
}

/** Whether any handle of the device is allocated. */
export function isHeld(state: HostState, deviceUuid: string): boolean {
  for (const a of state.allocations.values()) if (a.deviceUuid === deviceUuid) return true;
  return false;
}

/**
 * After a release (`before` the release, `after` it folded): the clean requested for each device
 * whose last holder just left and that requires a clean.
 */
export function cleaningAfterRelease(before: HostState, after: HostState, at: string): CleaningEvent[] {
  const events: CleaningEvent[] = [];
  for (const device of after.devices.values()) {
    if (device.lostArqs || !isHeld(before, device.uuid) || isHeld(after, device.uuid)) continue;
    const c = device.cleaning;
    if (c.inFlight || !(c.required || c.dirty)) continue;
    const reason = c.required ? "the device requires a clean after each use" : "a holder's profile group requires a clean after use (accel:clean_after_use)";
    events.push(requested(after.hostname!, device, reason, at));
  }
  return events;
}

/**
 * After a host's report (`after` it folded): each qualifying device the report shows is qualified
 * when healthy, failed when its health is CRITICAL, and left waiting otherwise.
 */
export function qualifyAfterReport(after: HostState, reported: ReadonlySet<string>, at: string): CleaningEvent[] {
  const events: CleaningEvent[] = [];
  for (const device of after.devices.values()) {
    if (!device.cleaning.qualifyingSince || !reported.has(device.uuid)) continue;
    const hostname = after.hostname!;
    const health = healthOf(device);
    if (health.status === "OK" || health.status === "WARNING") events.push({ type: "DeviceQualified", data: { hostname, deviceUuid: device.uuid, at } });
    else if (health.status === "CRITICAL") {
      const reason = `the health check after cleaning failed: ${health.reasons.map((r) => r.code).join(", ") || "CRITICAL"}`;
      events.push({ type: "DeviceFailed", data: { hostname, deviceUuid: device.uuid, reason, at } });
    }
  }
  return events;
}

/** The device's health as its driver last reported it (after this report); a device whose driver reports none is OK. */
function healthOf(device: DeviceNode): DeviceNode["health"] {
  return device.health;
}

export function decideCleaning(command: CleaningCommand, state: HostState): CleaningEvent[] {
  const { hostname, deviceUuid, at } = command.data;
  const device = state.devices.get(deviceUuid);
  if (!device) {
    if (command.type === "AbandonDeviceCleaning") return [];
    throw new DomainError("NOT_FOUND", `Device ${deviceUuid} not found on host ${hostname}`, "deviceUuid");
  }
  const c = device.cleaning;
  switch (command.type) {
    case "SetDeviceCleaningRequired": {
      const { required, by } = command.data;
      if (typeof required !== "boolean") throw new DomainError("BAD_USER_INPUT", "required must be true or false", "required");
      return c.required === required ? [] : [{ type: "DeviceCleaningRequirementSet", data: { hostname, deviceUuid, required, by, at } }];
    }
    case "RequestDeviceCleaning": {
      if (device.lostArqs) throw new DomainError("CONFLICT", `Device ${deviceUuid} is lost (no longer reported): it cannot be cleaned`, "uuid");
      if (c.inFlight) return [];
      const holders = [...state.allocations.values()].filter((a) => a.deviceUuid === deviceUuid).map((a) => a.arqUuid);
      if (holders.length > 0) throw new DomainError("CONFLICT", `Device ${deviceUuid} is held by ARQ ${holders.join(", ")}; it is cleaned once they are released`, "uuid");
      return [requested(hostname, device, text(command.data.reason, "reason"), at)];
    }
    case "ReportDeviceCleaned": {
      const digest = text(command.data.digest, "digest");
      const cmd = commandLine(command.data.command);
      const durationMs = duration(command.data.durationMs);
      if (!current(device, command.data.requestId, "cleaned")) return [];
      return [{ type: "DeviceCleaned", data: { hostname, deviceUuid, requestId: command.data.requestId, digest, command: cmd, durationMs, at } }];
    }
    case "ReportDeviceCleaningFailed": {
      const reason = text(command.data.reason, "reason");
      // A step that ran says how: its command line and duration are recorded with the reason.
      const ran = ranStep(command.data);
      if (!current(device, command.data.requestId, "failed")) return [];
      return failed(hostname, deviceUuid, command.data.requestId, reason, at, ran);
    }
    case "AbandonDeviceCleaning":
      if (c.inFlight?.requestId !== command.data.requestId) return [];
      return failed(hostname, deviceUuid, command.data.requestId, command.data.reason, at);
  }
}

function requested(hostname: string, device: DeviceNode, reason: string, at: string): CleaningEvent {
  const requestId = cleaningRequestIdFor(device.uuid, device.cleaning.requests);
  return { type: "DeviceCleaningRequested", data: { hostname, deviceUuid: device.uuid, requestId, reason, at } };
}

function failed(hostname: string, deviceUuid: string, requestId: string, reason: string, at: string, ran: { command: string[] | null; durationMs: number | null } = { command: null, durationMs: null }): CleaningEvent[] {
  return [
    { type: "DeviceCleaningFailed", data: { hostname, deviceUuid, requestId, reason, ...(ran.command ? { command: ran.command } : {}), ...(ran.durationMs !== null ? { durationMs: ran.durationMs } : {}), at } },
    { type: "DeviceFailed", data: { hostname, deviceUuid, reason: `cleaning failed: ${reason}`, at } },
  ];
}

/** Whether a report is about the request in flight; a repeat of the recorded outcome is nothing new, anything else refused. */
function current(device: DeviceNode, requestId: string, outcome: CleaningOutcome["outcome"]): boolean {
  const c = device.cleaning;
  if (c.inFlight?.requestId === requestId) return true;
  if (c.last?.requestId === requestId) {
    if (c.last.outcome === outcome) return false;
    throw new DomainError("CONFLICT", `cleaning request ${requestId} of device ${device.uuid} was already reported ${c.last.outcome}`, "requestId");
  }
  throw new DomainError("NOT_FOUND", `no cleaning request ${requestId} on device ${device.uuid}`, "requestId");
}

/** How each cleaning event changes the device's cleaning state. */
export function evolveCleaning(c: DeviceCleaningState, event: CleaningEvent): DeviceCleaningState {
  switch (event.type) {
    case "DeviceCleaningRequirementSet":
      return { ...c, required: event.data.required };
    case "DeviceCleaningRequested": {
      const { requestId, reason, at } = event.data;
      return { ...c, inFlight: { requestId, reason, requestedAt: at }, qualifyingSince: null, requests: c.requests + 1 };
    }
    case "DeviceCleaned": {
      const { requestId, digest, command, durationMs, at } = event.data;
      const last: CleaningOutcome = { requestId, outcome: "cleaned", digest, command, durationMs, reason: null, at };
      return { ...c, inFlight: null, dirty: false, failed: null, qualifyingSince: at, last };
    }
    case "DeviceCleaningFailed": {
      const { requestId, reason, at } = event.data;
      const last: CleaningOutcome = { requestId, outcome: "failed", digest: null, command: event.data.command ?? null, durationMs: event.data.durationMs ?? null, reason, at };
      return { ...c, inFlight: c.inFlight?.requestId === requestId ? null : c.inFlight, last };
    }
    case "DeviceQualified":
      return { ...c, qualifyingSince: null, failed: null };
    case "DeviceFailed":
      return { ...c, qualifyingSince: null, failed: { reason: event.data.reason, at: event.data.at } };
  }
}

/**
 * Cleaning use cases: an operator requires a clean after each use or asks for one (a repair), the
 * agent takes the requests in flight on its host and reports each outcome, and a request no agent
 * answers in time is closed as failed. The rules are domain/inventory/cleaning.ts.
 */
import type { DeviceNode, HostState } from "../domain/inventory/state.js";
import { validateHostname } from "../domain/inventory/report-validation.js";
import type { CommandContext, DeviceType, JsonObject } from "../domain/shared/types.js";
import { aggregates, type Streams } from "./streams.js";

/** A clean in flight, with what the agent needs to act on it. */
export interface CleaningRequestView {
  requestId: string;
  hostname: string;
  deviceUuid: string;
  deviceType: DeviceType;
  vendor: string;
  model: string;
  /** The driver names of the device's deployables: the agent picks the driver that cleans it. */
  driverNames: string[];
  /** The PCI function the clean step addresses. */
  controlPath: { type: string; info: JsonObject };
  reason: string;
  requestedAt: string;
}

export interface CleaningResultInput {
  hostname: string;
  deviceUuid: string;
  requestId: string;
  /** true: cleaned (`digest`, `command`, `durationMs`); false: failed (`reason`). */
  ok: boolean;
  digest?: string | null;
  command?: string[] | null;
  durationMs?: number | null;
  reason?: string | null;
}

export function cleaningView(hostname: string, device: DeviceNode): CleaningRequestView | null {
  const c = device.cleaning.inFlight;
  if (!c) return null;
  const driverNames = [...new Set([...device.deployables.values()].map((d) => d.driverName).filter((n): n is string => n !== null))];
  return {
    requestId: c.requestId,
    hostname,
    deviceUuid: device.uuid,
    deviceType: device.type,
    vendor: device.vendor,
    model: device.model,
    driverNames,
    controlPath: { type: device.controlPath.type, info: device.controlPath.info },
    reason: c.reason,
    requestedAt: c.requestedAt,
  };
}

/** The host's cleans in flight, oldest first. */
export function cleaningRequestsOf(hostname: string, state: HostState): CleaningRequestView[] {
  const out: CleaningRequestView[] = [];
  for (const device of state.devices.values()) {
    const v = cleaningView(hostname, device);
    if (v) out.push(v);
  }
  return out.sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
}

export async function cleaningInFlight(s: Streams, hostname: string): Promise<CleaningRequestView[]> {
  validateHostname(hostname);
  return cleaningRequestsOf(hostname, (await s.load(aggregates.host, hostname)).state);
}

export async function setDeviceCleaningRequired(s: Streams, ctx: CommandContext, hostname: string, deviceUuid: string, required: boolean): Promise<void> {
  await s.handle(aggregates.host, hostname, { type: "SetDeviceCleaningRequired", data: { hostname, deviceUuid, required, by: ctx.principal, at: ctx.at } }, ctx);
}

/** An operator's clean (a repair of a FAILED device, or a clean now): the request in flight afterwards. */
export async function requestDeviceCleaning(s: Streams, ctx: CommandContext, hostname: string, deviceUuid: string, reason: string | null): Promise<CleaningRequestView | null> {
  const why = reason?.trim() ? reason : `requested by ${ctx.principal}`;
  const r = await s.handle(aggregates.host, hostname, { type: "RequestDeviceCleaning", data: { hostname, deviceUuid, reason: why, at: ctx.at } }, ctx);
  const device = r.state.devices.get(deviceUuid);
  return device ? cleaningView(hostname, device) : null;
}

/** The agent's report; `recorded` is false for a repeated report. */
export async function reportCleaningResult(s: Streams, ctx: CommandContext, input: CleaningResultInput): Promise<{ recorded: boolean }> {
  const { hostname, deviceUuid, requestId, ok } = input;
  validateHostname(hostname);
  const at = ctx.at;
  const r = ok
    ? await s.handle(aggregates.host, hostname, { type: "ReportDeviceCleaned", data: { hostname, deviceUuid, requestId, digest: input.digest, command: input.command, durationMs: input.durationMs, at } }, ctx)
    : await s.handle(aggregates.host, hostname, { type: "ReportDeviceCleaningFailed", data: { hostname, deviceUuid, requestId, reason: input.reason, command: input.command, durationMs: input.durationMs, at } }, ctx);
  return { recorded: r.events.length > 0 };
}

/** Closes a clean that outlived its time: the device is FAILED; nothing if it closed meanwhile. */
export async function abandonCleaning(s: Streams, ctx: CommandContext, target: { hostname: string; deviceUuid: string; requestId: string; reason: string }): Promise<boolean> {
  const r = await s.handle(aggregates.host, target.hostname, { type: "AbandonDeviceCleaning", data: { ...target, at: ctx.at } }, ctx);
  return r.events.length > 0;
}

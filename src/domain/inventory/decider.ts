/**
 * Stream `host-<hostname>`: the host's inventory tree (reports diffed as in cyborg-reference 5.3),
 * device status, and attach-handle allocation.
 */
import { assertNever, fold, type Decider } from "../shared/decider.js";
import { DEVICE_STATUSES, DomainError, type DeviceStatus } from "../shared/types.js";
import { decideAllocate, decideRelease, type AllocateRequest, type ReleaseRequest } from "./allocation.js";
import { decidePartitionReport, type PartitionCommand } from "./partition-allocation.js";
import { withPartitionInventory } from "./partition-inventory.js";
import { cleaningAfterRelease, decideCleaning, qualifyAfterReport, type CleaningCommand } from "./cleaning.js";
import { diffValidatedReport, type ReportDiff } from "./diff.js";
import type { InventoryEvent } from "./events.js";
import type { HealthRule } from "./health-rules.js";
import { decideProgramming, type ProgrammingCommand } from "./programming.js";
import { digestOfValidated } from "./digest.js";
import { deviceUuidFor } from "./ids.js";
import { validateHostname, validateReport, type ReportedDevice } from "./report-validation.js";
import { evolveHost, initialHostState, type HostState } from "./state.js";
import { decideStatus, decideTaint, decideUntaint, type TaintCommand } from "./taints.js";

export type HostCommand =
  /**
   * devices: the host's whole report (DriverDevice[]), validated by decide. healthRules: what the
   * reported health is judged by (DEFAULT_HEALTH_RULES when absent).
   */
  | { type: "ReportHostInventory"; data: { hostname: string; devices: unknown; at: string; healthRules?: readonly HealthRule[] } }
  /** Cyborg's switch, over the maintenance taint (taints.ts): `by` and `reason` are the taint's (defaults: "unknown", "set to <status>"). */
  | { type: "SetDeviceStatus"; data: { hostname: string; deviceUuid: string; status: DeviceStatus; by?: string; reason?: string; at: string } }
  | TaintCommand
  | { type: "AllocateAttachHandle"; data: AllocateRequest }
  | { type: "ReleaseAttachHandle"; data: ReleaseRequest }
  | ProgrammingCommand
  | CleaningCommand
  | PartitionCommand;

export function decideHost(command: HostCommand, state: HostState): InventoryEvent[] {
  const hostname = checkHostname(state, command.data.hostname);
  switch (command.type) {
    case "ReportHostInventory":
      return decideReport({ ...command, type: "ReportHostInventory" }, state).events;
    case "SetDeviceStatus":
      if (!(DEVICE_STATUSES as readonly string[]).includes(command.data.status)) {
        throw new DomainError("BAD_USER_INPUT", `status must be one of ${DEVICE_STATUSES.join(", ")}`, "status");
      }
      return decideStatus(state, {
        ...command.data,
        hostname,
        by: command.data.by ?? "unknown",
        reason: command.data.reason ?? `set to ${command.data.status}`,
      });
    case "TaintDevice":
      return decideTaint(state, { ...command.data, hostname });
    case "UntaintDevice":
      return decideUntaint(state, { ...command.data, hostname });
    case "AllocateAttachHandle":
      return decideAllocate(state, command.data);
    case "ReleaseAttachHandle": {
      const released = decideRelease(state, command.data);
      return released.length === 0 ? released : [...released, ...cleaningAfterRelease(state, fold(hostDecider, state, released), command.data.at)];
    }
    case "RequestRegionProgramming":
    case "ReportRegionProgrammed":
    case "ReportRegionProgrammingFailed":
    case "AbandonRegionProgramming":
      return decideProgramming(command, state);
    case "SetDeviceCleaningRequired":
    case "RequestDeviceCleaning":
    case "ReportDeviceCleaned":
    case "ReportDeviceCleaningFailed":
    case "AbandonDeviceCleaning":
      return decideCleaning(command, state);
    case "ReportPartitionResult":
    case "ReportPartitionCreated":
    case "ReportPartitionCreationFailed":
    case "ReportPartitionDestroyed":
    case "ReportPartitionDestructionFailed":
      return withPartitionInventory(state, decidePartitionReport(command, state), hostname, command.data.at);
    default:
      return assertNever(command);
  }
}

/**
 * ReportHostInventory with its device-level counts (decideHost keeps only the events) and the
 * report as validated (what reportDigest hashes, so the caller need not validate it again). The
 * devices it shows healthy that wait for qualification after a clean are qualified in the same append.
 */
export function decideReport(
  command: Extract<HostCommand, { type: "ReportHostInventory" }>,
  state: HostState,
): ReportDiff & { report: ReportedDevice[] } {
  const hostname = checkHostname(state, command.data.hostname);
  const report = validateReport(command.data.devices);
  const { at, healthRules } = command.data;
  const diff = diffValidatedReport(state, hostname, report, at, healthRules);
  const events = withPartitionInventory(state, diff.events, hostname, at);
  if (awaitsQualification(state)) {
    const reported = new Set(report.map((d) => deviceUuidFor(hostname, d.cpidKey)));
    events.push(...qualifyAfterReport(fold(hostDecider, state, events), reported, at));
  }
  if (events.length > 0) events.push(...settled(fold(hostDecider, state, events), hostname, report, at, healthRules));
  return { ...diff, events, report };
}

/** HostReportSettled when the report diffs to nothing against the state it leaves: checked by diffing again, never assumed. */
function settled(after: HostState, hostname: string, report: ReportedDevice[], at: string, rules: readonly HealthRule[] | undefined): InventoryEvent[] {
  const again = diffValidatedReport(after, hostname, report, at, rules);
  if (again.events.length > 0) return [];
  return [{ type: "HostReportSettled", data: { hostname, digest: digestOfValidated(report), unchanged: again.summary.unchanged, at } }];
}

function awaitsQualification(state: HostState): boolean {
  for (const d of state.devices.values()) if (d.cleaning.qualifyingSince) return true;
  return false;
}

function checkHostname(state: HostState, raw: string): string {
  const hostname = validateHostname(raw);
  if (state.hostname !== null && state.hostname !== hostname) {
    throw new DomainError("BAD_USER_INPUT", `this stream holds host ${state.hostname}, not ${hostname}`, "hostname");
  }
  return hostname;
}

export const hostDecider: Decider<HostCommand, HostState, InventoryEvent> = {
  initialState: initialHostState,
  evolve: evolveHost,
  decide: decideHost,
};

export { initialHostState, evolveHost, type HostState };

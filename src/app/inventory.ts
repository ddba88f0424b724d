/** Host-inventory use cases: the agent's report and its confirmation, device status, and releasing an ARQ's handle. */
import type { HostLiveness } from "../domain/inventory/liveness.js";
import { decideReport, hostDecider, type HostCommand, type HostState } from "../domain/inventory/decider.js";
import { settledAtEnd } from "../domain/inventory/state.js";
import { digestOfValidated, validateDigest } from "../domain/inventory/digest.js";
import type { InventoryEvent } from "../domain/inventory/events.js";
import type { DriverDevice } from "../domain/inventory/report.js";
import type { HealthRule } from "../domain/inventory/health-rules.js";
import { validateHostname } from "../domain/inventory/report-validation.js";
import type { Decider } from "../domain/shared/decider.js";
import { stream, type CommandContext, type DeviceStatus } from "../domain/shared/types.js";
import { handleCommand } from "./handle.js";
import type { ReportDigests } from "./report-digests.js";
import type { ReportTimes } from "./report-times.js";
import { aggregates, type Streams } from "./streams.js";

/** The answer to a host's report: devices added, updated, removed and unchanged. */
export interface InventoryReportView {
  hostname: string;
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
  /** The host stream's revision after the report, -1 if the stream does not exist. */
  revision: number;
  /** The report's digest (domain/inventory/digest.ts), for confirmHostInventory; null where not known. */
  digest: string | null;
}

export async function reportHostInventory(
  s: Streams,
  digests: ReportDigests,
  ctx: CommandContext,
  hostname: string,
  devices: DriverDevice[],
  times?: ReportTimes,
  healthRules?: readonly HealthRule[],
): Promise<InventoryReportView> {
  validateHostname(hostname);
  // The agent is alive whatever its report says (even one the domain refuses).
  times?.note(hostname, ctx.at);
  // The host decider, keeping the diff of the attempt that was appended.
  let last: ReturnType<typeof decideReport> | undefined;
  const decider: Decider<HostCommand, HostState, InventoryEvent> = {
    ...hostDecider,
    decide: (command, state) => {
      if (command.type !== "ReportHostInventory") return hostDecider.decide(command, state);
      last = decideReport(command, state);
      return last.events;
    },
  };
  const command: Extract<HostCommand, { type: "ReportHostInventory" }> = {
    type: "ReportHostInventory",
    data: { hostname, devices, at: ctx.at, ...(healthRules ? { healthRules } : {}) },
  };
  const result = await handleCommand(s.store, stream.host(hostname), decider, command, ctx, { cache: s.cache, locks: s.locks });
  const { summary, report } = last!;
  const digest = digestOfValidated(report);
  // Remember the digest only if this report diffs to nothing against the state it left (the
  // decision says so with HostReportSettled when it wrote), so that a confirmation never hides a change.
  const settled = result.events.length === 0 ? { digest, unchanged: summary.unchanged, inventoryChanges: result.state.inventoryChanges } : result.state.settledReport;
  if (settled?.digest === digest && settled.inventoryChanges === result.state.inventoryChanges) digests.set(hostname, settled);
  else digests.delete(hostname);
  return { hostname, ...summary, revision: result.revision, digest };
}

/**
 * "Is this still my inventory?": the answer a full report with this digest would give, if the host
 * has recorded nothing but allocations and releases since such a report diffed to nothing; null
 * otherwise (unknown host or digest, changed since, or another process took the report), meaning
 * "send the full report". Writes nothing.
 */
export async function confirmHostInventory(
  s: Streams,
  digests: ReportDigests,
  hostname: string,
  digest: string,
  heard?: { times: ReportTimes; at: string },
): Promise<InventoryReportView | null> {
  validateHostname(hostname);
  const wanted = validateDigest(digest);
  // A confirmation is the agent's report of an unchanged host: it counts for liveness.
  heard?.times.note(hostname, heard.at);
  const fromEnd = await confirmedFromStreamEnd(s, hostname, wanted);
  if (fromEnd) return fromEnd;
  const { state, revision } = await s.load(aggregates.host, hostname);
  // What this process saw settle, else what the host stream says settled (a report another
  // process took, or one taken before this process started).
  const known = [digests.get(hostname), state.settledReport ?? undefined].find((k) => k?.digest === wanted && k.inventoryChanges === state.inventoryChanges);
  if (known === undefined) return null;
  digests.set(hostname, known);
  return { hostname, added: 0, updated: 0, removed: 0, unchanged: known.unchanged, revision, digest: wanted };
}


/** Host stream events read from its end to find the settled report standing there. */
const SETTLED_TAIL = 16;

/**
 * A host not in the aggregate cache (after a start, every host) is confirmed from the last events
 * of its stream when they show the digest settled with only allocations and releases since
 * (`settledAtEnd`): a few events read instead of the host's whole period folded, so the first round
 * of confirmations after a start costs what the fleet's reports cost, not its history. Anything
 * else (a cached host, an in-process digest, another digest, a change since) is the fold's answer.
 */
async function confirmedFromStreamEnd(s: Streams, hostname: string, wanted: string): Promise<InventoryReportView | null> {
  const name = stream.host(hostname);
  if (s.cache.get(name)) return null;
  const tail = await s.store.readStream(name, { direction: "backwards", maxCount: SETTLED_TAIL });
  const settled = settledAtEnd(tail);
  if (settled?.digest !== wanted) return null;
  return { hostname, added: 0, updated: 0, removed: 0, unchanged: settled.unchanged, revision: tail[0]!.revision, digest: wanted };
}

/** Idempotent: frees whatever handle the ARQ holds on the host, if any. */
export async function releaseHandleForArq(s: Streams, ctx: CommandContext, hostname: string, arqUuid: string): Promise<void> {
  await s.handle(aggregates.host, hostname, { type: "ReleaseAttachHandle", data: { hostname, arqUuid, at: ctx.at, keepIdlePartitions: s.policies.keepIdlePartitions } }, ctx);
}

/** What os-acc's initialize waits for: has this host's agent reported its inventory, with no programming in progress? */
export interface HostStatusView {
  hostname: string;
  /** The host's agent reported (devices the log knows, or an empty report this process took). */
  reported: boolean;
  devices: number;
  /** Regions whose programming the agent is working on (requested, no outcome yet). */
  programmingInProgress: number;
  /** The host stream's revision, -1 if it does not exist. */
  revision: number;
  /** Whether its agent reports on time (domain/inventory/liveness.ts). */
  liveness: HostLiveness;
}

export async function hostStatus(s: Streams, digests: ReportDigests, times: ReportTimes, hostname: string): Promise<HostStatusView> {
  validateHostname(hostname);
  const { state, revision } = await s.load(aggregates.host, hostname);
  let programmingInProgress = 0;
  for (const device of state.devices.values()) for (const d of device.deployables.values()) if (d.programming) programmingInProgress++;
  const reported = state.hostname !== null || digests.peek(hostname) !== undefined;
  return { hostname, reported, devices: state.devices.size, programmingInProgress, revision, liveness: times.liveness(hostname) };
}

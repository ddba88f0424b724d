/** Host-inventory use cases: the agent's report, device status, and releasing an ARQ's handle. */
import { decideReport, hostDecider, type HostCommand, type HostState } from "../domain/inventory/decider.js";
import type { ReportSummary } from "../domain/inventory/diff.js";
import type { InventoryEvent } from "../domain/inventory/events.js";
import type { DriverDevice } from "../domain/inventory/report.js";
import { validateHostname } from "../domain/inventory/report-validation.js";
import type { Decider } from "../domain/shared/decider.js";
import { stream, type CommandContext, type DeviceStatus } from "../domain/shared/types.js";
import { handleCommand } from "./handle.js";
import { aggregates, type Streams } from "./streams.js";
import type { InventoryReportView } from "./views.js";

export async function reportHostInventory(s: Streams, ctx: CommandContext, hostname: string, devices: DriverDevice[]): Promise<InventoryReportView> {
  validateHostname(hostname);
  // The host decider, keeping the counts of the diff of the attempt that was appended.
  let summary: ReportSummary | undefined;
  const decider: Decider<HostCommand, HostState, InventoryEvent> = {
    ...hostDecider,
    decide: (command, state) => {
      if (command.type !== "ReportHostInventory") return hostDecider.decide(command, state);
      const diff = decideReport(command, state);
      summary = diff.summary;
      return diff.events;
    },
  };
  const command: HostCommand = { type: "ReportHostInventory", data: { hostname, devices, at: ctx.at } };
  const result = await handleCommand(s.store, stream.host(hostname), decider, command, ctx, { cache: s.cache });
  return { hostname, ...summary!, revision: result.revision };
}

export async function setDeviceStatus(s: Streams, ctx: CommandContext, hostname: string, deviceUuid: string, status: DeviceStatus): Promise<void> {
  await s.handle(aggregates.host, hostname, { type: "SetDeviceStatus", data: { hostname, deviceUuid, status, at: ctx.at } }, ctx);
}

/** Idempotent: frees whatever handle the ARQ holds on the host, if any. */
export async function releaseHandleForArq(s: Streams, ctx: CommandContext, hostname: string, arqUuid: string): Promise<void> {
  await s.handle(aggregates.host, hostname, { type: "ReleaseAttachHandle", data: { hostname, arqUuid, at: ctx.at } }, ctx);
}

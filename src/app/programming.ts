/**
 * FPGA programming use cases: an operator's request (programDeployable), the agent's report of the
 * outcome, the binder's abandonment of a request that outlived BIND_TIMEOUT_S, and what a host's
 * agent has to do (the requests in flight on its regions). The rules are inventory/programming.ts.
 */
import { findDeployable, type DeployableNode, type DeviceNode, type HostState } from "../domain/inventory/state.js";
import type { ProgrammingBitstream, ProgrammingRequester } from "../domain/inventory/events.js";
import type { InventoryEvent } from "../domain/inventory/events.js";
import { programmingBitstream, type ProgrammingCommand } from "../domain/inventory/programming.js";
import { validateHostname } from "../domain/inventory/report-validation.js";
import { DomainError, type CommandContext, type JsonObject } from "../domain/shared/types.js";
import type { BitstreamCatalogue } from "../infra/bitstreams/port.js";
import { aggregates, type Streams } from "./streams.js";

/** A request in flight, with what the agent needs to act on it. */
export interface ProgrammingRequestView {
  requestId: string;
  hostname: string;
  deployableUuid: string;
  deployableName: string;
  /** The deployable's driver name (intel, XILINX, fake): the agent picks the driver that programs it. */
  driverName: string | null;
  rpUuid: string;
  /** The device's control path: the PCI function the program command addresses. */
  controlPath: { type: string; info: JsonObject };
  bitstream: ProgrammingBitstream;
  requestedBy: ProgrammingRequester;
  requestedAt: string;
}

export interface ProgrammingResultInput {
  hostname: string;
  deployableUuid: string;
  requestId: string;
  /** true: programmed; false: failed (`reason`). */
  ok: boolean;
  /** The driver's command line, as run; null when it never ran (download or checksum failed). */
  command: string[] | null;
  durationMs: number | null;
  reason?: string | null;
}

export function requestView(hostname: string, device: DeviceNode, region: DeployableNode): ProgrammingRequestView | null {
  const p = region.programming;
  if (!p) return null;
  return {
    requestId: p.requestId,
    hostname,
    deployableUuid: region.uuid,
    deployableName: region.name,
    driverName: region.driverName,
    rpUuid: region.rpUuid,
    controlPath: { type: device.controlPath.type, info: device.controlPath.info },
    bitstream: p.bitstream,
    requestedBy: p.requestedBy,
    requestedAt: p.requestedAt,
  };
}

/** The host's requests in flight, oldest first. */
export function requestsOf(hostname: string, state: HostState): ProgrammingRequestView[] {
  const out: ProgrammingRequestView[] = [];
  for (const device of state.devices.values()) {
    for (const region of device.deployables.values()) {
      const v = requestView(hostname, device, region);
      if (v) out.push(v);
    }
  }
  return out.sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
}

export async function programmingInFlight(s: Streams, hostname: string): Promise<ProgrammingRequestView[]> {
  validateHostname(hostname);
  return requestsOf(hostname, (await s.load(aggregates.host, hostname)).state);
}

/**
 * An operator asks for a region to be programmed (refused while it has bound ARQs). Returns the
 * request in flight afterwards: this one, or the one already programming the same bitstream;
 * null when the region already runs it.
 */
export async function programDeployable(
  s: Streams,
  catalogue: BitstreamCatalogue,
  newId: () => string,
  ctx: CommandContext,
  target: { hostname: string; deployableUuid: string; bitstreamId: string },
): Promise<ProgrammingRequestView | null> {
  const { hostname, deployableUuid, bitstreamId } = target;
  const b = await catalogue.get(bitstreamId);
  if (!b) throw new DomainError("NOT_FOUND", `bitstream ${bitstreamId} is not in the ${catalogue.kind} catalogue`, "bitstreamId");
  const command = {
    type: "RequestRegionProgramming" as const,
    data: { hostname, deployableUuid, requestId: newId(), bitstream: programmingBitstream(b), principal: ctx.principal, at: ctx.at },
  };
  const r = await s.handle(aggregates.host, hostname, command, ctx);
  const found = findDeployable(r.state, deployableUuid);
  return found ? requestView(hostname, found.device, found.deployable) : null;
}

/** The agent's report as a host command. */
function resultCommand(input: ProgrammingResultInput, at: string): ProgrammingCommand {
  const { hostname, deployableUuid, requestId, ok } = input;
  validateHostname(hostname);
  const data = { hostname, deployableUuid, requestId, command: input.command, durationMs: input.durationMs, at };
  return ok ? { type: "ReportRegionProgrammed", data } : { type: "ReportRegionProgrammingFailed", data: { ...data, reason: input.reason ?? "" } };
}

/** The agent's report alone; `recorded` is false for a repeated report. */
export async function reportProgrammingResult(s: Streams, ctx: CommandContext, input: ProgrammingResultInput): Promise<{ recorded: boolean; late: boolean }> {
  const r = await s.handle(aggregates.host, input.hostname, resultCommand(input, ctx.at), ctx);
  const first = r.events[0] as { data: { late?: boolean } } | undefined;
  return { recorded: r.events.length > 0, late: first?.data.late === true };
}

/** The binds that wait for the request the report answers (none when it is no longer in flight). */
export async function bindsWaitingOnProgramming(s: Streams, input: ProgrammingResultInput): Promise<string[]> {
  const { state } = await s.load(aggregates.host, validateHostname(input.hostname));
  const region = findDeployable(state, input.deployableUuid)?.deployable;
  if (region?.programming?.requestId !== input.requestId) return [];
  return [...state.allocations.values()].filter((a) => a.deployableUuid === region.uuid).map((a) => a.arqUuid);
}

/** The agent's report as a host decision, for a bind plan to append with the binds it completes. */
export function programmingResultOf(input: ProgrammingResultInput, at: string): { hostname: string; decide(state: HostState): InventoryEvent[] } {
  const command = resultCommand(input, at);
  return { hostname: input.hostname, decide: (state) => aggregates.host.decider.decide(command, state) };
}

/** Closes a request that outlived its time: the region's bitstream becomes unknown; nothing if it closed meanwhile. */
export async function abandonProgramming(s: Streams, ctx: CommandContext, target: { hostname: string; deployableUuid: string; requestId: string; reason: string }): Promise<boolean> {
  const r = await s.handle(aggregates.host, target.hostname, { type: "AbandonRegionProgramming", data: { ...target, at: ctx.at } }, ctx);
  return r.events.length > 0;
}

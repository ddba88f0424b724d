/**
 * Partition use cases: the agent takes the requests to make and destroy partitions in flight on
 * its host and reports each outcome. The rules are domain/inventory/partition-allocation.ts.
 */
import type { InventoryEvent } from "../domain/inventory/events.js";
import type { DeviceNode, HostState } from "../domain/inventory/state.js";
import { counterUse, usedSlots } from "../domain/inventory/partition-fit.js";
import { availabilityOf } from "../domain/inventory/partition-inventory.js";
import { creationByRequest, partitioningOf } from "../domain/inventory/partition-record.js";
import { validateHostname } from "../domain/inventory/report-validation.js";
import type { SlotPlacement } from "../domain/inventory/partitioning-report.js";
import type { CommandContext, JsonObject } from "../domain/shared/types.js";
import { aggregates, type Streams } from "./streams.js";

/** A request to the host's agent to make (CREATE) or destroy (DESTROY) a partition, with what its partitioner needs. */
export interface PartitionRequestView {
  requestId: string;
  hostname: string;
  deviceUuid: string;
  action: "CREATE" | "DESTROY";
  /** The driver whose partitioner acts (DriverPartitioning.driverName). */
  driverName: string | null;
  /** The device's control path info (its PCI address). */
  controlPath: JsonObject;
  /** CREATE: the profile (name, and what the tool calls it) and where it goes. */
  profile: { name: string; toolId: string } | null;
  placement: SlotPlacement | null;
  /** CREATE: the ARQ whose bind waits for it. */
  arqUuid: string | null;
  /** DESTROY: the partition, as discovery listed it. */
  uuid: string | null;
  toolRef: Record<string, string | number> | null;
  requestedAt: string;
}

export interface PartitionResultInput {
  hostname: string;
  requestId: string;
  /** true: made (`partition`, `command`, `durationMs`) or destroyed; false: failed (`reason`). */
  ok: boolean;
  partition?: unknown;
  command?: string[] | null;
  durationMs?: number | null;
  reason?: string | null;
}

/** The host's partition requests in flight, oldest first. */
export function partitionRequestsOf(hostname: string, state: HostState): PartitionRequestView[] {
  const out: PartitionRequestView[] = [];
  for (const device of state.devices.values()) {
    const rec = device.partitioning;
    if (!rec) continue;
    const base = { hostname, deviceUuid: device.uuid, driverName: rec.reported.driverName ?? null, controlPath: device.controlPath.info };
    for (const c of rec.creations.values()) {
      const toolId = rec.reported.profiles.find((p) => p.name === c.profile)?.toolId ?? c.profile;
      out.push({ ...base, requestId: c.requestId, action: "CREATE", profile: { name: c.profile, toolId }, placement: c.placement, arqUuid: c.arqUuid, uuid: null, toolRef: null, requestedAt: c.at });
    }
    for (const x of rec.destructions.values()) {
      const part = rec.reported.partitions.find((p) => p.uuid === x.uuid);
      out.push({ ...base, requestId: x.requestId, action: "DESTROY", profile: null, placement: part?.placement ?? null, arqUuid: null, uuid: x.uuid, toolRef: part?.toolRef ?? {}, requestedAt: x.at });
    }
  }
  return out.sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
}

export async function partitionRequestsInFlight(s: Streams, hostname: string): Promise<PartitionRequestView[]> {
  validateHostname(hostname);
  return partitionRequestsOf(hostname, (await s.load(aggregates.host, hostname)).state);
}

/** The ARQ whose bind waits for the partition the request makes, or null (a destruction, or a request no longer waited for). */
export async function bindWaitingOn(s: Streams, hostname: string, requestId: string): Promise<string | null> {
  const { state } = await s.load(aggregates.host, validateHostname(hostname));
  return creationByRequest(state, requestId)?.creation.arqUuid ?? null;
}

/** The agent's answer as a host decision, for a bind plan to append with the bind it completes. */
export function answerOf(input: PartitionResultInput, at: string): { hostname: string; decide(state: HostState): InventoryEvent[] } {
  const hostname = validateHostname(input.hostname);
  const { requestId, ok, partition, command, durationMs, reason } = input;
  return { hostname, decide: (state) => aggregates.host.decider.decide({ type: "ReportPartitionResult", data: { hostname, requestId, ok, partition, command, durationMs, reason, at } }, state) };
}

/** The agent's report alone; `recorded` is false for a repeated report or one the host no longer waits for. */
export async function reportPartitionResult(s: Streams, ctx: CommandContext, input: PartitionResultInput): Promise<{ recorded: boolean }> {
  const hostname = validateHostname(input.hostname);
  const { requestId, ok, partition, command, durationMs, reason } = input;
  const r = await s.handle(aggregates.host, hostname, { type: "ReportPartitionResult", data: { hostname, requestId, ok, partition, command, durationMs, reason, at: ctx.at } }, ctx);
  return { recorded: r.events.length > 0 };
}

/** A partitioned device as an operator reads it: slices used and free, each profile's room, the partitions and the requests under way. */
export interface DevicePartitioningView {
  driverName: string | null;
  counters: Array<{ name: string; total: number; used: number }>;
  slots: { total: number; used: number };
  profiles: Array<{ name: string; toolId: string; resourceClass: string; made: number; free: number; canHoldNow: number }>;
  partitions: Array<{ uuid: string | null; profile: string; placement: SlotPlacement | null; status: "READY" | "CREATING" | "DESTROYING"; arqUuid: string | null }>;
}

export function devicePartitioningView(device: DeviceNode): DevicePartitioningView | null {
  const model = partitioningOf(device);
  if (!model || !device.partitioning) return null;
  const use = counterUse(model);
  const used = usedSlots(model);
  const available = new Map(availabilityOf(device).map((a) => [a.profile, a.available]));
  return {
    driverName: device.partitioning.reported.driverName ?? null,
    counters: [...model.counters].map(([name, total]) => ({ name, total, used: use.get(name) ?? 0 })),
    slots: { total: model.slots, used: bitCount(used) },
    profiles: [...model.profiles.values()].map((p) => {
      const mine = model.partitions.filter((x) => x.profile === p.name && x.status === "READY");
      return { name: p.name, toolId: p.toolId, resourceClass: p.resourceClass, made: mine.length, free: mine.filter((x) => x.holder === null).length, canHoldNow: available.get(p.name) ?? 0 };
    }),
    partitions: model.partitions.map((x) => ({ uuid: x.uuid, profile: x.profile, placement: x.placement, status: x.status, arqUuid: x.holder })),
  };
}

function bitCount(n: number): number {
  let c = 0;
  for (let v = n; v; v &= v - 1) c++;
  return c;
}

export async function devicePartitioning(s: Streams, hostname: string, deviceUuid: string): Promise<DevicePartitioningView | null> {
  const device = (await s.load(aggregates.host, validateHostname(hostname))).state.devices.get(deviceUuid);
  return device ? devicePartitioningView(device) : null;
}

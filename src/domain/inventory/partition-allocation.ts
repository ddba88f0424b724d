/**
 * Binds and releases on partitioned devices, and the agent's answers, on the host stream. The
 * stream's revision serialises them, so two binds never take one partition or more slots than
 * the device has:
 * - a bind to a profile's provider takes a free partition of the profile (the lowest start first);
 *   else, when the counters and slots allow, it reserves one at the placement the policy picks
 *   (partition-fit.ts) and asks the agent to make it (PartitionCreationRequested), and waits;
 * - the agent's answer completes the reservation (the new handle, allocated to the ARQ) or drops it
 *   (the bind fails with the agent's reason); a bind that goes first abandons it;
 * - a released partition is destroyed (PartitionDestructionRequested), unless idle partitions are
 *   kept for reuse, and holds its slots until the agent answers.
 */
import { DomainError } from "../shared/types.js";
import { commandLine, duration, ranStep, text } from "./agent-report-fields.js";
import type { InventoryEvent } from "./events.js";
import type { DeployableNode, DeviceNode, HostState } from "./host-tree.js";
import { partitionRequestIdFor } from "./ids.js";
import { creationByRequest, deployableOfProfile, destructionByRequest, handleUuidOfPartition, partitioningOf } from "./partition-record.js";
import { allocatePartition } from "./partitioning.js";
import type { DriverPartitionProfile } from "./partitioning-report.js";
import { validateMadePartition } from "./report-validation.js";

export interface PartitionBind {
  hostname: string;
  rpUuid: string;
  arqUuid: string;
  instanceUuid: string;
  cleanAfterUse?: boolean;
  at: string;
}

export type PartitionCommand =
  /** The agent's answer to either kind of request (its id says which); true: done, false: failed with `reason`. */
  | { type: "ReportPartitionResult"; data: { hostname: string; requestId: string; ok: boolean; partition?: unknown; command?: unknown; durationMs?: unknown; reason?: unknown; at: string } }
  | { type: "ReportPartitionCreated"; data: { hostname: string; requestId: string; partition: unknown; command: unknown; durationMs: unknown; at: string } }
  | { type: "ReportPartitionCreationFailed"; data: { hostname: string; requestId: string; reason: unknown; command?: unknown; durationMs?: unknown; at: string } }
  | { type: "ReportPartitionDestroyed"; data: { hostname: string; requestId: string; command: unknown; durationMs: unknown; at: string } }
  | { type: "ReportPartitionDestructionFailed"; data: { hostname: string; requestId: string; reason: unknown; command?: unknown; durationMs?: unknown; at: string } };

/** A bind to a profile's provider: a free partition's handle, or a reservation and a request to make one (none while one is under way). */
export function allocateOnPartitionedDevice(device: DeviceNode, deployable: DeployableNode, profile: DriverPartitionProfile, req: PartitionBind): InventoryEvent[] {
  const { hostname, arqUuid, instanceUuid, rpUuid, at } = req;
  const rec = device.partitioning!;
  if (rec.creations.has(arqUuid)) return [];
  let grant;
  try {
    grant = allocatePartition(partitioningOf(device)!, profile.name, arqUuid, "best-fit").grant;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    throw new DomainError(err.code, `${err.message} (device ${device.uuid} on host ${hostname}; pick another provider, or unbind ARQs that no longer need theirs)`, "deviceRpUuid");
  }
  const cleanAfterUse = req.cleanAfterUse ? { cleanAfterUse: true as const } : {};
  if (grant.kind === "EXISTING") {
    const handleUuid = handleUuidOfPartition(deployable.uuid, grant.partition.driver!);
    const handle = deployable.handles.get(handleUuid);
    if (!handle || handle.lost) throw new DomainError("CONFLICT", `partition ${grant.partition.uuid} has no attach handle on ${deployable.name} yet: its host has not reported it`, "deviceRpUuid");
    return [{ type: "AttachHandleAllocated", data: { hostname, deviceUuid: device.uuid, deployableUuid: deployable.uuid, rpUuid, handleUuid, handleType: handle.type, info: handle.info, arqUuid, instanceUuid, ...cleanAfterUse, at } }];
  }
  return [
    {
      type: "PartitionCreationRequested",
      data: {
        hostname,
        deviceUuid: device.uuid,
        deployableUuid: deployable.uuid,
        requestId: partitionRequestIdFor(device.uuid, rec.requests),
        arqUuid,
        instanceUuid,
        profile: profile.name,
        toolId: profile.toolId,
        placement: grant.placement,
        driverName: rec.reported.driverName ?? null,
        controlPath: device.controlPath.info,
        ...cleanAfterUse,
        at,
      },
    },
  ];
}

/** The ARQ's reservation of a partition still being made, dropped: the ARQ no longer waits for it. */
export function abandonCreation(state: HostState, hostname: string, arqUuid: string, reason: string, at: string): InventoryEvent[] {
  for (const device of state.devices.values()) {
    const c = device.partitioning?.creations.get(arqUuid);
    if (c) return [{ type: "PartitionCreationAbandoned", data: { hostname, deviceUuid: device.uuid, requestId: c.requestId, arqUuid, reason, at } }];
  }
  return [];
}

/** After the ARQ's handle was released (`after`): its partition is destroyed, unless idle partitions are kept. */
export function destroyAfterRelease(after: HostState, hostname: string, deviceUuid: string, deployableUuid: string, handleUuid: string, keepIdle: boolean, at: string): InventoryEvent[] {
  const device = after.devices.get(deviceUuid);
  const rec = device?.partitioning;
  const deployable = device?.deployables.get(deployableUuid);
  if (!device || !rec || !deployable || keepIdle || !deployable.handles.has(handleUuid)) return [];
  const part = rec.reported.partitions.find((p) => deployableOfProfile(device, p.profile)?.uuid === deployableUuid && handleUuidOfPartition(deployableUuid, p) === handleUuid);
  if (!part || rec.destructions.has(part.uuid)) return [];
  return [
    {
      type: "PartitionDestructionRequested",
      data: { hostname, deviceUuid, deployableUuid, handleUuid, requestId: partitionRequestIdFor(deviceUuid, rec.requests), uuid: part.uuid, toolRef: part.toolRef, driverName: rec.reported.driverName ?? null, controlPath: device.controlPath.info, at },
    },
  ];
}

/**
 * The agent's answers. An answer to a request the stream no longer waits for (abandoned, answered)
 * records nothing: a partition made after its bind had gone enters with the host's next report, free.
 */
export function decidePartitionReport(command: PartitionCommand, state: HostState): InventoryEvent[] {
  const { hostname, requestId, at } = command.data;
  switch (command.type) {
    case "ReportPartitionResult": {
      const { ok, partition, command: cmd, durationMs, reason } = command.data;
      if (typeof ok !== "boolean") throw new DomainError("BAD_USER_INPUT", "ok must be true or false", "ok");
      const making = creationByRequest(state, requestId) !== null;
      if (!making && destructionByRequest(state, requestId) === null) return [];
      const data = { hostname, requestId, partition, command: cmd, durationMs, reason, at };
      if (making) return decidePartitionReport({ type: ok ? "ReportPartitionCreated" : "ReportPartitionCreationFailed", data }, state);
      return decidePartitionReport({ type: ok ? "ReportPartitionDestroyed" : "ReportPartitionDestructionFailed", data }, state);
    }
    case "ReportPartitionCreated":
      return created(state, hostname, requestId, command.data, at);
    case "ReportPartitionCreationFailed": {
      const reason = text(command.data.reason, "reason");
      const ran = ranStep(command.data, true);
      const found = creationByRequest(state, requestId);
      if (!found) return [];
      return [{ type: "PartitionCreationFailed", data: { hostname, deviceUuid: found.device.uuid, requestId, arqUuid: found.creation.arqUuid, reason, ...ran, at } }];
    }
    case "ReportPartitionDestroyed": {
      const cmd = commandLine(command.data.command, true);
      const durationMs = duration(command.data.durationMs);
      const found = destructionByRequest(state, requestId);
      if (!found) return [];
      const { device } = found;
      const { uuid, handleUuid, deployableUuid } = found.destruction;
      const events: InventoryEvent[] = [{ type: "PartitionDestroyed", data: { hostname, deviceUuid: device.uuid, requestId, uuid, command: cmd, durationMs, at } }];
      if (device.deployables.get(deployableUuid)?.handles.has(handleUuid)) events.push({ type: "AttachHandleRemoved", data: { hostname, deployableUuid, handleUuid, at } });
      return events;
    }
    case "ReportPartitionDestructionFailed": {
      const reason = text(command.data.reason, "reason");
      const ran = ranStep(command.data, true);
      const found = destructionByRequest(state, requestId);
      if (!found) return [];
      return [{ type: "PartitionDestructionFailed", data: { hostname, deviceUuid: found.device.uuid, requestId, uuid: found.destruction.uuid, reason, ...ran, at } }];
    }
  }
}

function created(state: HostState, hostname: string, requestId: string, d: { partition: unknown; command: unknown; durationMs: unknown }, at: string): InventoryEvent[] {
  const cmd = commandLine(d.command);
  const durationMs = duration(d.durationMs);
  const found = creationByRequest(state, requestId);
  if (!found) return [];
  const { device, creation: c } = found;
  const { arqUuid } = c;
  const rec = device.partitioning!;
  const partition = validateMadePartition(d.partition, rec.reported.profiles, rec.reported.slots);
  if (partition.profile !== c.profile) throw new DomainError("BAD_USER_INPUT", `the agent made a partition of profile ${partition.profile}; request ${requestId} asked for ${c.profile}`, "partition.profile");
  if (rec.reported.partitions.some((p) => p.uuid === partition.uuid)) throw new DomainError("BAD_USER_INPUT", `partition ${partition.uuid} already exists on device ${device.uuid}`, "partition.uuid");
  const deployable = device.deployables.get(c.deployableUuid);
  if (!deployable) return [{ type: "PartitionCreationFailed", data: { hostname, deviceUuid: device.uuid, requestId, arqUuid, reason: `the profile's provider left the host's report while partition ${partition.uuid} was made`, command: cmd, durationMs, at } }];
  const handleUuid = handleUuidOfPartition(deployable.uuid, partition);
  const handle = { handleUuid, handleType: partition.attachHandle.type, info: partition.attachHandle.info };
  const where = { hostname, deviceUuid: device.uuid, deployableUuid: deployable.uuid };
  return [
    { type: "PartitionCreated", data: { ...where, requestId, arqUuid, partition, handleUuid, command: cmd, durationMs, at } },
    { type: "AttachHandleAdded", data: { ...where, ...handle, at } },
    { type: "AttachHandleAllocated", data: { ...where, rpUuid: deployable.rpUuid, ...handle, arqUuid, instanceUuid: c.instanceUuid, ...(c.cleanAfterUse ? { cleanAfterUse: true as const } : {}), at } },
  ];
}

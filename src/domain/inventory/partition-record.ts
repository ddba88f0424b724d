/**
 * What the host stream knows of a partitioned device: the driver's last report of it (profiles,
 * counters, slots, the partitions that exist, kept current by the partitions made and destroyed
 * since) and the requests the agent is working on. The model the rules decide with
 * (partitioning.ts) is a view of it and of the handles' holders, so who holds what lives once: in
 * the attach handles' allocations.
 */
import { canonicalJson } from "../shared/json.js";
import type { DeployableNode, DeviceNode, DevicePartitionRecord, PendingCreation, PendingDestruction } from "./host-tree.js";
import { attachHandleUuidFor } from "./ids.js";
import type { PartitionEvent } from "./partition-events.js";
import type { DevicePartitioning, PartitionState } from "./partition-state.js";
import type { DriverPartition, DriverPartitioning, DriverPartitionProfile, SlotPlacement } from "./partitioning-report.js";

export function evolvePartitionRecord(record: DevicePartitionRecord | null, event: PartitionEvent): DevicePartitionRecord | null {
  if (event.type === "DevicePartitioningChanged") {
    const p = event.data.partitioning;
    if (p === null) return null;
    return { reported: p, creations: record?.creations ?? new Map(), destructions: record?.destructions ?? new Map(), requests: record?.requests ?? 0, available: record?.available ?? new Map() };
  }
  if (record === null) return null;
  if (event.type === "PartitionInventoryChanged") return { ...record, available: new Map(event.data.available.map((a) => [a.deployableUuid, a.available])) };
  const d = event.data;
  switch (event.type) {
    case "PartitionCreationRequested": {
      const c: PendingCreation = { requestId: d.requestId, arqUuid: event.data.arqUuid, instanceUuid: event.data.instanceUuid, profile: event.data.profile, placement: event.data.placement, deployableUuid: event.data.deployableUuid, cleanAfterUse: event.data.cleanAfterUse === true, at: d.at };
      return { ...record, creations: new Map([...record.creations, [c.arqUuid, c]]), requests: record.requests + 1 };
    }
    case "PartitionCreated": {
      const made = event.data.partition;
      const partitions = record.reported.partitions.some((x) => x.uuid === made.uuid) ? record.reported.partitions : [...record.reported.partitions, made];
      return { ...record, reported: { ...record.reported, partitions }, creations: withoutCreation(record.creations, d.requestId) };
    }
    case "PartitionCreationFailed":
    case "PartitionCreationAbandoned":
      return { ...record, creations: withoutCreation(record.creations, d.requestId) };
    case "PartitionDestructionRequested": {
      const x: PendingDestruction = { requestId: d.requestId, uuid: event.data.uuid, handleUuid: event.data.handleUuid, deployableUuid: event.data.deployableUuid, at: d.at };
      return { ...record, destructions: new Map([...record.destructions, [x.uuid, x]]), requests: record.requests + 1 };
    }
    case "PartitionDestroyed": {
      const partitions = record.reported.partitions.filter((x) => x.uuid !== event.data.uuid);
      return { ...record, reported: { ...record.reported, partitions }, destructions: withoutDestruction(record.destructions, event.data.uuid) };
    }
    case "PartitionDestructionFailed":
      return { ...record, destructions: withoutDestruction(record.destructions, event.data.uuid) };
  }
}

function withoutCreation(m: ReadonlyMap<string, PendingCreation>, requestId: string): ReadonlyMap<string, PendingCreation> {
  const entry = [...m.values()].find((c) => c.requestId === requestId);
  if (!entry) return m;
  const next = new Map(m);
  next.delete(entry.arqUuid);
  return next;
}

function withoutDestruction(m: ReadonlyMap<string, PendingDestruction>, uuid: string): ReadonlyMap<string, PendingDestruction> {
  if (!m.has(uuid)) return m;
  const next = new Map(m);
  next.delete(uuid);
  return next;
}

/** The creation a request id names on the host, with its device; null when none waits under it. */
export function creationByRequest(state: { devices: ReadonlyMap<string, DeviceNode> }, requestId: string): { device: DeviceNode; creation: PendingCreation } | null {
  for (const device of state.devices.values()) {
    for (const creation of device.partitioning?.creations.values() ?? []) if (creation.requestId === requestId) return { device, creation };
  }
  return null;
}

/** The destruction a request id names on the host, with its device; null when none waits under it. */
export function destructionByRequest(state: { devices: ReadonlyMap<string, DeviceNode> }, requestId: string): { device: DeviceNode; destruction: PendingDestruction } | null {
  for (const device of state.devices.values()) {
    for (const destruction of device.partitioning?.destructions.values() ?? []) if (destruction.requestId === requestId) return { device, destruction };
  }
  return null;
}

/** Whether the ARQ waits for a partition being made on the host (it holds no handle yet, but slots are reserved for it). */
export function awaitsPartition(state: { devices: ReadonlyMap<string, DeviceNode> }, arqUuid: string): boolean {
  for (const d of state.devices.values()) if (d.partitioning?.creations.has(arqUuid)) return true;
  return false;
}

/** The profile a deployable of a partitioned device offers (its `rc` is the profile's resource class), or null. */
export function profileOfDeployable(device: DeviceNode, deployable: DeployableNode): DriverPartitionProfile | null {
  const rc = deployable.attributes.get("rc")?.value;
  if (!device.partitioning || rc === undefined) return null;
  return device.partitioning.reported.profiles.find((p) => p.resourceClass === rc) ?? null;
}

/** The deployable of the device that offers the profile, or null. */
export function deployableOfProfile(device: DeviceNode, profile: string): DeployableNode | null {
  const rc = device.partitioning?.reported.profiles.find((p) => p.name === profile)?.resourceClass;
  if (rc === undefined) return null;
  for (const d of device.deployables.values()) if (d.attributes.get("rc")?.value === rc) return d;
  return null;
}

/** The attach handle a partition is on its profile's deployable (the same id the report's diff gives it). */
export function handleUuidOfPartition(deployableUuid: string, partition: DriverPartition): string {
  return attachHandleUuidFor(deployableUuid, canonicalJson(partition.attachHandle.info));
}

/** The model of the device's partitions now (partitioning.ts): the reported ones with their holders, and those being made. */
export function partitioningOf(device: DeviceNode): DevicePartitioning | null {
  const rec = device.partitioning;
  if (!rec) return null;
  const p = rec.reported;
  const deployables = new Map(p.profiles.map((x) => [x.name, deployableOfProfile(device, x.name)]));
  const existing: PartitionState[] = p.partitions.map((part) => {
    const dep = deployables.get(part.profile);
    const handle = dep?.handles.get(handleUuidOfPartition(dep.uuid, part));
    return { profile: part.profile, uuid: part.uuid, placement: part.placement, status: rec.destructions.has(part.uuid) ? "DESTROYING" : "READY", holder: handle?.allocatedTo?.arqUuid ?? null, driver: part };
  });
  const making: PartitionState[] = [...rec.creations.values()].map((c) => ({ profile: c.profile, uuid: null, placement: c.placement, status: "CREATING", holder: c.arqUuid, driver: null }));
  return {
    counters: new Map(p.counters.map((c) => [c.name, c.total])),
    slots: p.slots,
    oneProfileAtATime: p.oneProfileAtATime,
    profiles: new Map(p.profiles.map((x) => [x.name, x])),
    partitions: [...existing, ...making],
  };
}

/**
 * How each inventory event changes the host's tree: by the level it touches (device, deployable,
 * handle, a region's programming), each copying the path from the root to the changed node.
 */
import { assertNever } from "../shared/decider.js";
import type {
  AttachHandleAdded,
  AttachHandleAllocated,
  AttachHandleChanged,
  AttachHandleLost,
  AttachHandleReleased,
  AttachHandleRemoved,
  AttributeRemoved,
  AttributeSet,
  DeployableAdded,
  DeployableChanged,
  DeployableRemoved,
  DeviceChanged,
  DeviceDiscovered,
  DeviceHealthChanged,
  DeviceTopologyChanged,
  DeviceCapacitiesChanged,
  DeviceLost,
  DeviceRemoved,
  DeviceStatusChanged,
  DeviceTainted,
  DeviceUntainted,
  InventoryEvent,
  ProgrammingBitstream,
  RegionProgrammed,
  RegionProgrammingAbandoned,
  RegionProgrammingFailed,
  RegionProgrammingRequested,
} from "./events.js";
import { evolveCleaning, initialCleaning } from "./cleaning.js";
import type { CleaningEvent } from "./cleaning-events.js";
import type { PartitionEvent } from "./partition-events.js";
import { evolvePartitionRecord } from "./partition-record.js";
import { HEALTHY } from "./health.js";
import { MAINTENANCE_TAINT_KEY, statusOf, withTaint, withoutTaint } from "./taints.js";
import type { Allocation, DeployableNode, DeviceNode, HandleNode, HostState, ProgrammingClosed, ProgrammingReport } from "./host-tree.js";

type DeviceEvent = DeviceDiscovered | DeviceChanged | DeviceStatusChanged | DeviceHealthChanged | DeviceTopologyChanged | DeviceCapacitiesChanged | DeviceTainted | DeviceUntainted | DeviceLost | DeviceRemoved;
type DeployableEvent = DeployableAdded | DeployableChanged | DeployableRemoved | AttributeSet | AttributeRemoved;
type HandleEvent = AttachHandleAdded | AttachHandleChanged | AttachHandleLost | AttachHandleRemoved | AttachHandleAllocated | AttachHandleReleased;
type ProgrammingEvent = RegionProgrammingRequested | RegionProgrammed | RegionProgrammingFailed | RegionProgrammingAbandoned;

export function evolveTree(state: HostState, event: InventoryEvent): HostState {
  switch (event.type) {
    case "DeviceDiscovered":
    case "DeviceChanged":
    case "DeviceStatusChanged":
    case "DeviceHealthChanged":
    case "DeviceTopologyChanged":
    case "DeviceCapacitiesChanged":
    case "DeviceTainted":
    case "DeviceUntainted":
    case "DeviceLost":
    case "DeviceRemoved":
      return evolveDevice(state, event);
    case "DeployableAdded":
    case "DeployableChanged":
    case "DeployableRemoved":
    case "AttributeSet":
    case "AttributeRemoved":
      return evolveDeployable(state, event);
    case "AttachHandleAdded":
    case "AttachHandleChanged":
    case "AttachHandleLost":
    case "AttachHandleRemoved":
    case "AttachHandleAllocated":
    case "AttachHandleReleased":
      return evolveHandle(state, event);
    case "RegionProgrammingRequested":
    case "RegionProgrammed":
    case "RegionProgrammingFailed":
    case "RegionProgrammingAbandoned":
      return evolveProgramming(state, event);
    case "DeviceCleaningRequirementSet":
    case "DeviceCleaningRequested":
    case "DeviceCleaned":
    case "DeviceCleaningFailed":
    case "DeviceQualified":
    case "DeviceFailed":
      return updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, cleaning: evolveCleaning(d.cleaning, event as CleaningEvent), updatedAt: event.data.at }));
    case "DevicePartitioningChanged":
    case "PartitionInventoryChanged":
    case "PartitionCreationRequested":
    case "PartitionCreated":
    case "PartitionCreationFailed":
    case "PartitionCreationAbandoned":
    case "PartitionDestructionRequested":
    case "PartitionDestroyed":
    case "PartitionDestructionFailed":
      return evolvePartitions(state, event);
    case "HostReportSettled":
    case "HostBooksClosed":
      return state;
    default:
      return assertNever(event);
  }
}

function evolveDevice(state: HostState, event: DeviceEvent): HostState {
  switch (event.type) {
    case "DeviceDiscovered": {
      const { hostname, deviceUuid, at, additionalControlPaths, ...fields } = event.data;
      const node: DeviceNode = {
        uuid: deviceUuid,
        ...fields,
        additionalControlPaths: additionalControlPaths ?? [],
        createdAt: at,
        updatedAt: null,
        lostArqs: null,
        health: HEALTHY,
        topology: null,
        capacities: [],
        taints: [],
        deployables: new Map(),
        cleaning: initialCleaning(),
        partitioning: null,
      };
      return { ...state, hostname, devices: withEntry(state.devices, deviceUuid, node) };
    }
    case "DeviceChanged":
      return updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, ...event.data.changes, updatedAt: event.data.at }));
    case "DeviceStatusChanged":
      return updateDevice(state, event.data.deviceUuid, (d) => withTaints(d, legacyStatusTaints(d, event.data), event.data.at));
    case "DeviceHealthChanged":
      return updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, health: event.data.health, updatedAt: event.data.at }));
    case "DeviceTopologyChanged":
      return updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, topology: event.data.topology, updatedAt: event.data.at }));
    case "DeviceCapacitiesChanged":
      return updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, capacities: event.data.capacities, updatedAt: event.data.at }));
    case "DeviceTainted":
      return updateDevice(state, event.data.deviceUuid, (d) => withTaints(d, withTaint(d.taints, event.data.taint), event.data.at));
    case "DeviceUntainted":
      return updateDevice(state, event.data.deviceUuid, (d) => withTaints(d, withoutTaint(d.taints, event.data.key, event.data.effect), event.data.at));
    case "DeviceLost":
      return updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, lostArqs: event.data.arqUuids, updatedAt: event.data.at }));
    case "DeviceRemoved": {
      const device = state.devices.get(event.data.deviceUuid);
      if (!device) return state;
      const index = new Map(state.deviceOfDeployable);
      for (const id of device.deployables.keys()) index.delete(id);
      return {
        ...state,
        devices: withoutEntry(state.devices, device.uuid),
        deviceOfDeployable: index,
        allocations: withoutAllocations(state.allocations, (a) => a.deviceUuid === device.uuid),
      };
    }
    default:
      return assertNever(event);
  }
}

function withTaints(d: DeviceNode, taints: DeviceNode["taints"], at: string): DeviceNode {
  return { ...d, taints, status: statusOf(taints), updatedAt: at };
}

/** A status change written before taints: MAINTAINING is the maintenance taint (author unknown), ENABLED removes it. */
function legacyStatusTaints(d: DeviceNode, e: DeviceStatusChanged["data"]): DeviceNode["taints"] {
  if (e.status === "ENABLED") return d.taints.filter((t) => t.key !== MAINTENANCE_TAINT_KEY);
  return withTaint(d.taints, { key: MAINTENANCE_TAINT_KEY, value: "", effect: "NoSchedule", by: "", reason: "set to MAINTAINING", at: e.at });
}

/** A deployable and its attributes. */
function evolveDeployable(state: HostState, event: DeployableEvent): HostState {
  switch (event.type) {
    case "DeployableAdded": {
      const { hostname: _, deviceUuid, deployableUuid, at, ...fields } = event.data;
      const empty = { attributes: new Map(), handles: new Map(), programming: null, lastProgramming: null };
      const node: DeployableNode = { uuid: deployableUuid, ...fields, createdAt: at, updatedAt: null, ...empty };
      const next = updateDevice(state, deviceUuid, (dev) => ({ ...dev, deployables: withEntry(dev.deployables, node.uuid, node) }));
      return next === state ? state : { ...next, deviceOfDeployable: withEntry(state.deviceOfDeployable, node.uuid, deviceUuid) };
    }
    case "DeployableChanged":
      return updateDeployable(state, event.data.deployableUuid, (d) => ({ ...d, ...event.data.changes, updatedAt: event.data.at }));
    case "DeployableRemoved": {
      const { deviceUuid, deployableUuid } = event.data;
      const next = updateDevice(state, deviceUuid, (dev) => ({ ...dev, deployables: withoutEntry(dev.deployables, deployableUuid) }));
      return {
        ...next,
        deviceOfDeployable: withoutEntry(state.deviceOfDeployable, deployableUuid),
        allocations: withoutAllocations(state.allocations, (a) => a.deployableUuid === deployableUuid),
      };
    }
    case "AttributeSet": {
      const { deployableUuid, attributeUuid, key, value, parentAttributeUuid } = event.data;
      const node = { uuid: attributeUuid, value, parentUuid: parentAttributeUuid ?? null };
      return updateDeployable(state, deployableUuid, (d) => ({ ...d, attributes: withEntry(d.attributes, key, node) }));
    }
    case "AttributeRemoved":
      return updateDeployable(state, event.data.deployableUuid, (d) => ({ ...d, attributes: withoutEntry(d.attributes, event.data.key) }));
    default:
      return assertNever(event);
  }
}

/** An attach handle, and which ARQ holds it. */
function evolveHandle(state: HostState, event: HandleEvent): HostState {
  switch (event.type) {
    case "AttachHandleAdded": {
      const { deployableUuid, handleUuid, handleType, info } = event.data;
      const node: HandleNode = { uuid: handleUuid, type: handleType, info, lost: false, allocatedTo: null };
      return updateDeployable(state, deployableUuid, (d) => ({ ...d, handles: withEntry(d.handles, handleUuid, node) }));
    }
    case "AttachHandleChanged":
      return updateHandle(state, event.data.deployableUuid, event.data.handleUuid, (h) => ({ ...h, type: event.data.handleType }));
    case "AttachHandleLost":
      return updateHandle(state, event.data.deployableUuid, event.data.handleUuid, (h) => ({ ...h, lost: true }));
    case "AttachHandleRemoved": {
      const { deployableUuid, handleUuid } = event.data;
      const next = updateDeployable(state, deployableUuid, (d) => ({ ...d, handles: withoutEntry(d.handles, handleUuid) }));
      return { ...next, allocations: withoutAllocations(next.allocations, (a) => a.handleUuid === handleUuid) };
    }
    case "AttachHandleAllocated": {
      const { hostname: _, at: __, ...allocation } = event.data;
      const { deployableUuid, handleUuid, arqUuid, instanceUuid } = allocation;
      const handled = updateHandle(state, deployableUuid, handleUuid, (h) => ({ ...h, allocatedTo: { arqUuid, instanceUuid } }));
      const next = event.data.cleanAfterUse ? updateDevice(handled, event.data.deviceUuid, (d) => ({ ...d, cleaning: { ...d.cleaning, dirty: true } })) : handled;
      return { ...next, allocations: withEntry(next.allocations, arqUuid, allocation), programmingFailures: withoutEntry(next.programmingFailures, arqUuid) };
    }
    case "AttachHandleReleased": {
      const d = event.data;
      const next = updateHandle(state, d.deployableUuid, d.handleUuid, (h) => ({ ...h, allocatedTo: null }));
      return { ...next, allocations: withoutEntry(next.allocations, d.arqUuid), programmingFailures: withoutEntry(next.programmingFailures, d.arqUuid) };
    }
    default:
      return assertNever(event);
  }
}

/** A partitioned device's record; a failed creation fails the bind that waited for it. */
function evolvePartitions(state: HostState, event: PartitionEvent): HostState {
  const next = updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, partitioning: evolvePartitionRecord(d.partitioning, event), updatedAt: event.data.at }));
  if (event.type === "PartitionCreationFailed") return { ...next, programmingFailures: withEntry(next.programmingFailures, event.data.arqUuid, event.data.reason) };
  if (event.type === "PartitionCreationRequested") return { ...next, programmingFailures: withoutEntry(next.programmingFailures, event.data.arqUuid) };
  return next;
}

/** A region's programming request, from asked to closed. */
function evolveProgramming(state: HostState, event: ProgrammingEvent): HostState {
  switch (event.type) {
    case "RegionProgrammingRequested": {
      const { requestId, bitstream, requestedBy, at } = event.data;
      return updateDeployable(state, event.data.deployableUuid, (d) => ({ ...d, programming: { requestId, bitstream, requestedBy, requestedAt: at } }));
    }
    case "RegionProgrammed": {
      const d = event.data;
      const report = { reason: null, command: d.command, durationMs: d.durationMs, late: d.late, at: d.at };
      return closeRequest(state, d.deployableUuid, d.requestId, d.bitstream, "programmed", report, []);
    }
    case "RegionProgrammingFailed":
    case "RegionProgrammingAbandoned": {
      const d = event.data;
      const report: ProgrammingReport =
        event.type === "RegionProgrammingFailed"
          ? { reason: d.reason, command: event.data.command, durationMs: event.data.durationMs, late: event.data.late, at: d.at }
          : { reason: d.reason, command: null, durationMs: null, late: false, at: d.at };
      const outcome = event.type === "RegionProgrammingFailed" ? "failed" : "abandoned";
      return closeRequest(state, d.deployableUuid, d.requestId, null, outcome, report, d.arqUuids.map((a) => [a, d.reason] as const));
    }
    default:
      return assertNever(event);
  }
}

/** Closes the request (if it is the one in flight) and records what the waiting binds learn. */
function closeRequest(
  state: HostState,
  deployableUuid: string,
  requestId: string,
  reported: ProgrammingBitstream | null,
  outcome: ProgrammingClosed["outcome"],
  report: ProgrammingReport,
  failures: ReadonlyArray<readonly [string, string]>,
): HostState {
  const next = updateDeployable(state, deployableUuid, (d) => {
    const request = d.programming?.requestId === requestId ? d.programming : null;
    const bitstream = request?.bitstream ?? (d.lastProgramming?.requestId === requestId ? d.lastProgramming.bitstream : reported);
    return {
      ...d,
      programming: request ? null : d.programming,
      lastProgramming: bitstream ? { requestId, bitstream, outcome, report } : d.lastProgramming,
    };
  });
  if (failures.length === 0) return next;
  const programmingFailures = new Map(next.programmingFailures);
  for (const [arqUuid, reason] of failures) programmingFailures.set(arqUuid, reason);
  return { ...next, programmingFailures };
}

export function findDeployable(state: HostState, deployableUuid: string): { device: DeviceNode; deployable: DeployableNode } | undefined {
  const device = state.devices.get(state.deviceOfDeployable.get(deployableUuid) ?? "");
  const deployable = device?.deployables.get(deployableUuid);
  return device && deployable ? { device, deployable } : undefined;
}

function updateDevice(state: HostState, deviceUuid: string, fn: (d: DeviceNode) => DeviceNode): HostState {
  const device = state.devices.get(deviceUuid);
  return device ? { ...state, devices: withEntry(state.devices, deviceUuid, fn(device)) } : state;
}

function updateDeployable(state: HostState, deployableUuid: string, fn: (d: DeployableNode) => DeployableNode): HostState {
  const found = findDeployable(state, deployableUuid);
  if (!found) return state;
  const { device, deployable } = found;
  return updateDevice(state, device.uuid, (d) => ({ ...d, deployables: withEntry(d.deployables, deployableUuid, fn(deployable)) }));
}

function updateHandle(state: HostState, deployableUuid: string, handleUuid: string, fn: (h: HandleNode) => HandleNode): HostState {
  return updateDeployable(state, deployableUuid, (d) => {
    const handle = d.handles.get(handleUuid);
    return handle ? { ...d, handles: withEntry(d.handles, handleUuid, fn(handle)) } : d;
  });
}

function withEntry<K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> {
  const next = new Map(map);
  next.set(key, value);
  return next;
}

function withoutEntry<K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> {
  if (!map.has(key)) return map;
  const next = new Map(map);
  next.delete(key);
  return next;
}

function withoutAllocations(map: ReadonlyMap<string, Allocation>, drop: (a: Allocation) => boolean): ReadonlyMap<string, Allocation> {
  let next: Map<string, Allocation> | undefined;
  for (const [k, a] of map) {
    if (!drop(a)) continue;
    next ??= new Map(map);
    next.delete(k);
  }
  return next ?? map;
}


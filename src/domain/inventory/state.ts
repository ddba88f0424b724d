/**
 * The host's inventory tree as folded from stream `host-<hostname>`, plus which attach handle is
 * allocated to which ARQ. Immutable: evolve copies the path from the root to the changed node.
 * Maps keep insertion order, so handles are offered in the order they were first reported.
 */
import { assertNever } from "../shared/decider.js";
import type { AttachHandleType, JsonObject } from "../shared/types.js";
import type { AttachHandleAllocated, DeployableAdded, DeviceDiscovered, InventoryEvent, ProgrammingBitstream, ProgrammingRequester } from "./events.js";

export interface HandleNode {
  uuid: string;
  type: AttachHandleType;
  info: JsonObject;
  /** Left the report while allocated: not offered again, removed when released. */
  lost: boolean;
  allocatedTo: { arqUuid: string; instanceUuid: string } | null;
}

export interface AttributeNode {
  uuid: string;
  value: string;
}

/** A programming request of a region, while the agent works on it. */
export interface ProgrammingInFlight {
  requestId: string;
  bitstream: ProgrammingBitstream;
  requestedBy: ProgrammingRequester;
  requestedAt: string;
}

/** How the region's last closed request ended (a late report of an abandoned one is still taken). */
export interface ProgrammingClosed {
  requestId: string;
  bitstream: ProgrammingBitstream;
  outcome: "programmed" | "failed" | "abandoned";
  /** What the closing event reported (time travel shows a region's last programming from it). */
  report: ProgrammingReport;
}

export type ProgrammingReport = { reason: string | null; command: string[] | null; durationMs: number | null; late: boolean; at: string };

export type DeployableNode = Pick<
  DeployableAdded["data"],
  "name" | "numAccelerators" | "driverName" | "parentUuid" | "rootUuid" | "rpUuid" | "bitstreamId"
> & {
  uuid: string;
  /** When it was added and last changed (the events' `at`): what the tree looked like then. */
  createdAt: string;
  updatedAt: string | null;
  /** By key. */
  attributes: ReadonlyMap<string, AttributeNode>;
  /** By handle uuid, in the order first reported. */
  handles: ReadonlyMap<string, HandleNode>;
  /** The request the agent is working on; the handles allocated meanwhile are binds waiting for it. */
  programming: ProgrammingInFlight | null;
  lastProgramming: ProgrammingClosed | null;
};

export type DeviceNode = Pick<
  DeviceDiscovered["data"],
  "type" | "vendor" | "model" | "stdBoardInfo" | "vendorBoardInfo" | "controlPath" | "status"
> & {
  uuid: string;
  /** When it was discovered and last changed (changes, status, loss; the events' `at`). */
  createdAt: string;
  updatedAt: string | null;
  /** Left the report while some handle was allocated (the ARQs it named); removed once all are released. */
  lostArqs: readonly string[] | null;
  /** By deployable uuid. */
  deployables: ReadonlyMap<string, DeployableNode>;
};

/** Which handle an ARQ holds: what AttachHandleAllocated recorded. */
export type Allocation = Omit<AttachHandleAllocated["data"], "hostname" | "at">;

export interface HostState {
  hostname: string | null;
  /** By device uuid. */
  devices: ReadonlyMap<string, DeviceNode>;
  /** Deployable uuid to device uuid. */
  deviceOfDeployable: ReadonlyMap<string, string>;
  /** By ARQ uuid. */
  allocations: ReadonlyMap<string, Allocation>;
  /** ARQs whose region's programming failed or was abandoned while they waited, with the reason; until their handle is released. */
  programmingFailures: ReadonlyMap<string, string>;
  /**
   * How many events other than AttachHandleAllocated / AttachHandleReleased the stream holds.
   * Allocating and releasing never change what a report diffs to (a release that must remove a
   * lost handle or device records that removal as its own event), so while this count stays the
   * same, a report that diffed to nothing still does (see app/report-digests.ts).
   */
  inventoryChanges: number;
}

export const initialHostState = (): HostState => ({
  hostname: null,
  devices: new Map(),
  deviceOfDeployable: new Map(),
  allocations: new Map(),
  programmingFailures: new Map(),
  inventoryChanges: 0,
});

export function evolveHost(state: HostState, event: InventoryEvent): HostState {
  const next = evolveTree(state, event);
  if (event.type === "AttachHandleAllocated" || event.type === "AttachHandleReleased") return next;
  return { ...next, inventoryChanges: state.inventoryChanges + 1 };
}

function evolveTree(state: HostState, event: InventoryEvent): HostState {
  switch (event.type) {
    case "DeviceDiscovered": {
      const { hostname, deviceUuid, at, ...fields } = event.data;
      const node: DeviceNode = { uuid: deviceUuid, ...fields, createdAt: at, updatedAt: null, lostArqs: null, deployables: new Map() };
      return { ...state, hostname, devices: withEntry(state.devices, deviceUuid, node) };
    }
    case "DeviceChanged":
      return updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, ...event.data.changes, updatedAt: event.data.at }));
    case "DeviceStatusChanged":
      return updateDevice(state, event.data.deviceUuid, (d) => ({ ...d, status: event.data.status, updatedAt: event.data.at }));
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
      const { deployableUuid, attributeUuid, key, value } = event.data;
      return updateDeployable(state, deployableUuid, (d) => ({ ...d, attributes: withEntry(d.attributes, key, { uuid: attributeUuid, value }) }));
    }
    case "AttributeRemoved":
      return updateDeployable(state, event.data.deployableUuid, (d) => ({ ...d, attributes: withoutEntry(d.attributes, event.data.key) }));
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
      const next = updateHandle(state, deployableUuid, handleUuid, (h) => ({ ...h, allocatedTo: { arqUuid, instanceUuid } }));
      return { ...next, allocations: withEntry(next.allocations, arqUuid, allocation), programmingFailures: withoutEntry(next.programmingFailures, arqUuid) };
    }
    case "AttachHandleReleased": {
      const d = event.data;
      const next = updateHandle(state, d.deployableUuid, d.handleUuid, (h) => ({ ...h, allocatedTo: null }));
      return { ...next, allocations: withoutEntry(next.allocations, d.arqUuid), programmingFailures: withoutEntry(next.programmingFailures, d.arqUuid) };
    }
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

/** Every handle of a device that is allocated, with its deployable. */
export function allocatedHandles(device: DeviceNode): Array<{ deployable: DeployableNode; handle: HandleNode }> {
  const out: Array<{ deployable: DeployableNode; handle: HandleNode }> = [];
  for (const deployable of device.deployables.values()) {
    for (const handle of deployable.handles.values()) if (handle.allocatedTo) out.push({ deployable, handle });
  }
  return out;
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


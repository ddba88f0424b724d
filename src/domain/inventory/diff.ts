/**
 * The host-report diff of cyborg-reference 5.3, as events. Devices are matched by control path
 * (canonical PCI address), deployables by name, attributes by key, attach handles by attach_info.
 * Devices reported as `stub` are neither added nor removed. An identical report emits nothing.
 *
 * Cyborg bug 5.5 fixed: what disappears while one of its handles is allocated is not deleted.
 * - A device: DeviceLost names the ARQs; the whole device stays until its last handle is released.
 * - A deployable: its allocated handles get AttachHandleLost, its free ones are removed; the
 *   deployable stays with its attributes, and the next report after the release removes it.
 * - A handle: AttachHandleLost; it stays, never offered again, until released (then removed).
 * Something lost that shows up again stays lost until released; the next report then re-adds it
 * with the same (deterministic) ids.
 *
 * Events come in two phases, every removal before any addition or change, so that a deployable
 * that moves between devices (same name, same RP uuid) is removed before it is added again.
 */
import { canonicalJson } from "../shared/json.js";
import type { JsonObject } from "../shared/types.js";
import { checkOwnDeployables } from "./deployable-names.js";
import { HEALTHY } from "./health.js";
import { healthEvents } from "./health-diff.js";
import { topologyEvents } from "./topology.js";
import { partitioningEvents, withPartitionDeployables } from "./partition-deployables.js";
import { capacitiesEvents } from "./capacity-record.js";
import { DEFAULT_HEALTH_RULES, type HealthRule } from "./health-rules.js";
import type { ControlPath, DeployableChanged, DeviceChanged, InventoryEvent } from "./events.js";
import { attachHandleUuidFor, attributeUuidFor, controlPathUuidFor, deployableUuidFor, deviceUuidFor, rpUuidFor } from "./ids.js";
import { validateReport, type ReportedAttribute, type ReportedDeployable, type ReportedDevice } from "./report-validation.js";
import { isFunctionTrait } from "../shared/traits.js";
import { allocatedHandles, type DeployableNode, type DeviceNode, type HandleNode, type HostState } from "./state.js";

export interface ReportSummary {
  /** Device-level counts. */
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
}

export interface ReportDiff {
  events: InventoryEvent[];
  summary: ReportSummary;
}

interface Phases {
  removals: InventoryEvent[];
  upserts: InventoryEvent[];
}

export function diffHostReport(state: HostState, hostname: string, devices: unknown, at: string, rules: readonly HealthRule[] = DEFAULT_HEALTH_RULES): ReportDiff {
  return diffValidatedReport(state, hostname, validateReport(devices), at, rules);
}

/**
 * diffHostReport of a report validateReport already returned; refuses deployables that are not the
 * host's. `rules`: the health rules the reported health is judged by (health-rules.ts).
 */
export function diffValidatedReport(
  state: HostState,
  hostname: string,
  report: ReportedDevice[],
  at: string,
  rules: readonly HealthRule[] = DEFAULT_HEALTH_RULES,
): ReportDiff {
  checkOwnDeployables(hostname, report);
  report = withPartitionDeployables(hostname, report);
  const reported = new Map<string, ReportedDevice>();
  for (const d of report) reported.set(deviceUuidFor(hostname, d.cpidKey), d);
  const out: Phases = { removals: [], upserts: [] };
  const summary: ReportSummary = { added: 0, updated: 0, removed: 0, unchanged: 0 };

  for (const device of state.devices.values()) {
    if (reported.has(device.uuid) || device.lostArqs) continue;
    out.removals.push(...loseOrRemoveDevice(hostname, device, at));
    summary.removed++;
  }
  for (const [uuid, r] of reported) {
    const known = state.devices.get(uuid);
    if (r.stub || known?.lostArqs) {
      if (known) summary.unchanged++;
      continue;
    }
    if (!known) {
      out.upserts.push(
        ...addDevice(hostname, uuid, r, at),
        ...healthEvents(hostname, { uuid, health: HEALTHY, taints: [] }, r.health, rules, at),
        ...topologyEvents(hostname, uuid, null, r.topology, at),
        ...partitioningEvents(hostname, uuid, null, r.partitioning, at),
        ...capacitiesEvents(hostname, uuid, [], r.capacities, at),
      );
      summary.added++;
      continue;
    }
    const before = out.removals.length + out.upserts.length;
    diffDevice(hostname, known, r, at, out);
    out.upserts.push(...healthEvents(hostname, known, r.health, rules, at), ...topologyEvents(hostname, uuid, known.topology, r.topology, at), ...partitioningEvents(hostname, uuid, known.partitioning, r.partitioning, at));
    out.upserts.push(...capacitiesEvents(hostname, uuid, known.capacities, r.capacities, at));
    if (out.removals.length + out.upserts.length > before) summary.updated++;
    else summary.unchanged++;
  }
  return { events: [...out.removals, ...out.upserts], summary };
}

function loseOrRemoveDevice(hostname: string, device: DeviceNode, at: string): InventoryEvent[] {
  const held = allocatedHandles(device).map(({ handle }) => handle.allocatedTo!.arqUuid);
  if (held.length > 0) return [{ type: "DeviceLost", data: { hostname, deviceUuid: device.uuid, arqUuids: held, at } }];
  return removeDevice(hostname, device, at);
}

/** Children first: handles, attributes and deployables, then the device. */
export function removeDevice(hostname: string, device: DeviceNode, at: string): InventoryEvent[] {
  const events: InventoryEvent[] = [];
  for (const d of childrenFirst(device)) events.push(...removeDeployable(hostname, device.uuid, d, at));
  events.push({ type: "DeviceRemoved", data: { hostname, deviceUuid: device.uuid, at } });
  return events;
}

function removeDeployable(hostname: string, deviceUuid: string, d: DeployableNode, at: string): InventoryEvent[] {
  const events: InventoryEvent[] = [];
  for (const h of d.handles.values()) events.push({ type: "AttachHandleRemoved", data: { hostname, deployableUuid: d.uuid, handleUuid: h.uuid, at } });
  for (const [key, a] of d.attributes) events.push({ type: "AttributeRemoved", data: { hostname, deployableUuid: d.uuid, attributeUuid: a.uuid, key, at } });
  events.push({ type: "DeployableRemoved", data: { hostname, deviceUuid, deployableUuid: d.uuid, at } });
  return events;
}

function addDevice(hostname: string, deviceUuid: string, r: ReportedDevice, at: string): InventoryEvent[] {
  const events: InventoryEvent[] = [
    {
      type: "DeviceDiscovered",
      data: {
        hostname,
        deviceUuid,
        type: r.type,
        vendor: r.vendor,
        model: r.model,
        stdBoardInfo: r.stdBoardInfo,
        vendorBoardInfo: r.vendorBoardInfo,
        controlPath: { uuid: controlPathUuidFor(hostname, r.cpidKey), type: r.controlPath.type, info: r.controlPath.info },
        ...(r.additionalControlPaths.length > 0 ? { additionalControlPaths: controlPaths(hostname, r) } : {}),
        status: "ENABLED",
        at,
      },
    },
  ];
  for (const d of r.deployables) events.push(...addDeployable(hostname, deviceUuid, r, d, at));
  return events;
}

function addDeployable(hostname: string, deviceUuid: string, device: ReportedDevice, d: ReportedDeployable, at: string): InventoryEvent[] {
  const deployableUuid = deployableUuidFor(deviceUuid, d.name);
  const { parentUuid, rootUuid } = lineage(deviceUuid, device, d);
  const events: InventoryEvent[] = [
    {
      type: "DeployableAdded",
      data: {
        hostname,
        deviceUuid,
        deployableUuid,
        name: d.name,
        numAccelerators: d.numAccelerators,
        driverName: d.driverName,
        parentUuid,
        rootUuid,
        rpUuid: rpUuidFor(d.name),
        bitstreamId: null,
        at,
      },
    },
  ];
  for (const a of d.attributes) events.push(attributeSet(hostname, deployableUuid, a, at));
  for (const h of d.handles) {
    const handleUuid = attachHandleUuidFor(deployableUuid, h.infoKey);
    events.push({ type: "AttachHandleAdded", data: { hostname, deviceUuid, deployableUuid, handleUuid, handleType: h.type, info: h.info, at } });
  }
  return events;
}

function diffDevice(hostname: string, known: DeviceNode, r: ReportedDevice, at: string, out: Phases): void {
  const changes: DeviceChanged["data"]["changes"] = {};
  if (known.type !== r.type) changes.type = r.type;
  if (known.vendor !== r.vendor) changes.vendor = r.vendor;
  if (known.model !== r.model) changes.model = r.model;
  if (!sameJson(known.stdBoardInfo, r.stdBoardInfo)) changes.stdBoardInfo = r.stdBoardInfo;
  if (!sameJson(known.vendorBoardInfo, r.vendorBoardInfo)) changes.vendorBoardInfo = r.vendorBoardInfo;
  const paths = controlPaths(hostname, r);
  if (canonicalJson(known.additionalControlPaths) !== canonicalJson(paths)) changes.additionalControlPaths = paths;
  if (Object.keys(changes).length > 0) out.upserts.push({ type: "DeviceChanged", data: { hostname, deviceUuid: known.uuid, changes, at } });

  const reported = new Map(r.deployables.map((d) => [deployableUuidFor(known.uuid, d.name), d] as const));
  for (const d of childrenFirst(known)) {
    if (!reported.has(d.uuid)) out.removals.push(...loseOrRemoveDeployable(hostname, known.uuid, d, at));
  }
  for (const [uuid, d] of reported) {
    const old = known.deployables.get(uuid);
    if (!old) out.upserts.push(...addDeployable(hostname, known.uuid, r, d, at));
    else diffDeployable(hostname, known.uuid, r, old, d, at, out);
  }
}

function loseOrRemoveDeployable(hostname: string, deviceUuid: string, d: DeployableNode, at: string): InventoryEvent[] {
  const handles = [...d.handles.values()];
  if (!handles.some((h) => h.allocatedTo)) return removeDeployable(hostname, deviceUuid, d, at);
  return handles.flatMap((h) => loseOrRemoveHandle(hostname, d.uuid, h, at));
}

function loseOrRemoveHandle(hostname: string, deployableUuid: string, h: HandleNode, at: string): InventoryEvent[] {
  if (h.lost) return [];
  if (h.allocatedTo) return [{ type: "AttachHandleLost", data: { hostname, deployableUuid, handleUuid: h.uuid, arqUuid: h.allocatedTo.arqUuid, at } }];
  return [{ type: "AttachHandleRemoved", data: { hostname, deployableUuid, handleUuid: h.uuid, at } }];
}

function diffDeployable(
  hostname: string,
  deviceUuid: string,
  device: ReportedDevice,
  old: DeployableNode,
  d: ReportedDeployable,
  at: string,
  out: Phases,
): void {
  const changes: DeployableChanged["data"]["changes"] = {};
  if (old.numAccelerators !== d.numAccelerators) changes.numAccelerators = d.numAccelerators;
  if (old.driverName !== d.driverName) changes.driverName = d.driverName;
  const { parentUuid, rootUuid } = lineage(deviceUuid, device, d);
  if (old.parentUuid !== parentUuid) changes.parentUuid = parentUuid;
  if (old.rootUuid !== rootUuid) changes.rootUuid = rootUuid;
  // A region whose reported function changed no longer runs the bitstream programming left on it.
  if (old.bitstreamId !== null && functionsOf(old.attributes.values()) !== functionsOf(d.attributes)) changes.bitstreamId = null;
  if (Object.keys(changes).length > 0) out.upserts.push({ type: "DeployableChanged", data: { hostname, deployableUuid: old.uuid, changes, at } });

  const attrs = new Map(d.attributes.map((a) => [a.key, a] as const));
  for (const [key, a] of old.attributes) {
    if (!attrs.has(key)) out.removals.push({ type: "AttributeRemoved", data: { hostname, deployableUuid: old.uuid, attributeUuid: a.uuid, key, at } });
  }
  for (const a of d.attributes) {
    const known = old.attributes.get(a.key);
    if (known?.value === a.value && known.parentUuid === parentAttributeUuid(old.uuid, a)) continue;
    out.upserts.push(attributeSet(hostname, old.uuid, a, at));
  }

  const handles = new Map(d.handles.map((h) => [attachHandleUuidFor(old.uuid, h.infoKey), h] as const));
  for (const h of old.handles.values()) {
    if (!handles.has(h.uuid)) out.removals.push(...loseOrRemoveHandle(hostname, old.uuid, h, at));
  }
  for (const [handleUuid, h] of handles) {
    const known = old.handles.get(handleUuid);
    if (!known) {
      out.upserts.push({ type: "AttachHandleAdded", data: { hostname, deviceUuid, deployableUuid: old.uuid, handleUuid, handleType: h.type, info: h.info, at } });
    } else if (!known.lost && known.type !== h.type) {
      out.upserts.push({ type: "AttachHandleChanged", data: { hostname, deployableUuid: old.uuid, handleUuid, handleType: h.type, at } });
    }
  }
}

/** The device's other control paths, with their (deterministic) uuids. */
function controlPaths(hostname: string, r: ReportedDevice): ControlPath[] {
  return r.additionalControlPaths.map((c) => ({ uuid: controlPathUuidFor(hostname, c.key), type: c.type, info: c.info }));
}

const parentAttributeUuid = (deployableUuid: string, a: ReportedAttribute) => (a.parentKey === null ? null : attributeUuidFor(deployableUuid, a.parentKey));

/** The attribute, nested under its parent when it has one (the field is left out at the top, as before nesting). */
function attributeSet(hostname: string, deployableUuid: string, a: ReportedAttribute, at: string): InventoryEvent {
  const parent = parentAttributeUuid(deployableUuid, a);
  const attributeUuid = attributeUuidFor(deployableUuid, a.key);
  return { type: "AttributeSet", data: { hostname, deployableUuid, attributeUuid, key: a.key, value: a.value, ...(parent === null ? {} : { parentAttributeUuid: parent }), at } };
}

/** A reported deployable's parent and root uuids (validateReport guarantees parents exist, no cycles). */
function lineage(deviceUuid: string, device: ReportedDevice, d: ReportedDeployable): { parentUuid: string | null; rootUuid: string } {
  const byName = new Map(device.deployables.map((x) => [x.name, x] as const));
  let root = d;
  while (root.parentName !== null) root = byName.get(root.parentName)!;
  return {
    parentUuid: d.parentName === null ? null : deployableUuidFor(deviceUuid, d.parentName),
    rootUuid: deployableUuidFor(deviceUuid, root.name),
  };
}

/** The device's deployables, deepest first, so children are removed before their parents. */
function childrenFirst(device: DeviceNode): DeployableNode[] {
  const depth = (d: DeployableNode): number => {
    let n = 0;
    for (let p = d.parentUuid; p !== null && n <= device.deployables.size; n++) p = device.deployables.get(p)?.parentUuid ?? null;
    return n;
  };
  return [...device.deployables.values()].map((d) => ({ d, k: depth(d) })).sort((a, b) => b.k - a.k).map((x) => x.d);
}

/** The function traits among attributes, as one comparable string. */
function functionsOf(attributes: Iterable<{ value: string }>): string {
  return [...new Set([...attributes].map((a) => a.value).filter(isFunctionTrait))].sort().join(" ");
}

function sameJson(a: JsonObject | null, b: JsonObject | null): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Validation of one host's report (DriverDevice[]): bad input is BAD_USER_INPUT with a field path
 * such as `devices[2].deployables[0].name`. The result is normalised: PCI addresses in canonical
 * form, trait and resource-class attribute values normalised, deployables ordered parents first.
 */
import { canonicalJson, isJsonObject, isJsonValue, sortKeys } from "../shared/json.js";
import { ATTACH_HANDLE_TYPES, DEVICE_TYPES, DomainError, type AttachHandleType, type DeviceType, type JsonObject } from "../shared/types.js";
import { validateHealth, type DeviceHealth } from "./health.js";
import { normalizePciInfo } from "./pci.js";
import { validateTopology } from "./topology.js";
import type { DriverCapacity, DriverPartition, DriverPartitioning, DriverPartitionProfile } from "./partitioning-report.js";
import { validateCapacities, validatePartition, validatePartitioning } from "./partitioning-validation.js";
import type { DeviceTopology } from "./topology-report.js";
import { isValidResourceClass, isValidTrait, normalizeTraitName } from "../shared/traits.js";

export const MAX_NAME_LENGTH = 255;
export const MAX_DRIVER_NAME_LENGTH = 100;
export const HOSTNAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** A PCI card has at most 8 functions per slot, and a multi-slot card a few slots. */
export const MAX_CONTROL_PATHS = 32;

export interface ReportedAttribute {
  key: string;
  value: string;
  /** The key of the attribute it is nested under (checked: on the same deployable, no cycle). */
  parentKey: string | null;
}
export interface ReportedControlPath {
  type: "PCI";
  info: JsonObject;
  /** Canonical JSON of the PCI address. */
  key: string;
}
export interface ReportedHandle {
  type: AttachHandleType;
  info: JsonObject;
  /** Canonical JSON of info: the handle's identity (Cyborg matches handles by attach_info). */
  infoKey: string;
}
export interface ReportedDeployable {
  /** Position in the report, for error paths. */
  index: number;
  name: string;
  numAccelerators: number;
  driverName: string | null;
  parentName: string | null;
  attributes: ReportedAttribute[];
  handles: ReportedHandle[];
}
export interface ReportedDevice {
  type: DeviceType;
  vendor: string;
  model: string;
  stdBoardInfo: JsonObject | null;
  vendorBoardInfo: JsonObject | null;
  controlPath: { type: "PCI"; info: JsonObject };
  /** Canonical JSON of the control path's PCI address: the device's identity. */
  cpidKey: string;
  /** The device's other control paths, in report order. */
  additionalControlPaths: ReportedControlPath[];
  stub: boolean;
  /** Absent when the report carries none (left out, so such a report's digest is what it was before health). */
  health?: DeviceHealth;
  /** Absent when the report carries none (so such a report's digest is what it was before topology). */
  topology?: DeviceTopology;
  /**
   * Absent for a device that is not cut into partitions; its partitions' attach handles normalised
   * as any handle is. The diff derives one deployable per profile from it (partition-deployables.ts).
   */
  partitioning?: DriverPartitioning;
  /** Absent when the report carries none (so such a report's digest is what it was before capacities). */
  capacities?: DriverCapacity[];
  /** Parents before children; otherwise in report order. */
  deployables: ReportedDeployable[];
}

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

/**
 * The report's own structure (devices, control paths, deployables, attributes, handles) may be
 * class instances, as GraphQL input objects arrive: only their fields are read, and the result is
 * built anew, so it shares nothing with the input. JSON-valued fields (info, board info) must
 * still be plain JSON objects.
 */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function validateHostname(hostname: unknown): string {
  if (typeof hostname !== "string" || hostname.length === 0 || hostname.length > MAX_NAME_LENGTH || !HOSTNAME_RE.test(hostname)) {
    throw bad("hostname", `hostname must be 1 to ${MAX_NAME_LENGTH} characters of letters, digits, ".", "-" and "_"`);
  }
  return hostname;
}

export function validateReport(devices: unknown): ReportedDevice[] {
  if (!Array.isArray(devices)) throw bad("devices", "devices must be a list");
  const cpids = new Map<string, string>();
  const deployableNames = new Map<string, string>();
  const handleKeys = new Map<string, string>();
  return devices.map((raw, i) => {
    const field = `devices[${i}]`;
    const device = validateDevice(raw, field);
    const paths = [{ key: device.cpidKey, at: `${field}.controlPath.info` }, ...device.additionalControlPaths.map((c, j) => ({ key: c.key, at: `${field}.additionalControlPaths[${j}].info` }))];
    for (const { key, at } of paths) {
      const first = cpids.get(key);
      if (first !== undefined) throw bad(at, `${first} has the same control path ${key}`);
      cpids.set(key, field);
    }
    for (const dep of device.deployables) {
      const depField = `${field}.deployables[${dep.index}]`;
      const other = deployableNames.get(dep.name);
      if (other !== undefined) throw bad(`${depField}.name`, `deployable name ${dep.name} is already used by ${other}`);
      deployableNames.set(dep.name, depField);
      dep.handles.forEach((h, j) => {
        const prev = handleKeys.get(h.infoKey);
        if (prev !== undefined) throw bad(`${depField}.attachHandles[${j}].info`, `attach handle ${h.infoKey} is already reported at ${prev}`);
        handleKeys.set(h.infoKey, `${depField}.attachHandles[${j}]`);
      });
    }
    return device;
  });
}

function validateDevice(raw: unknown, field: string): ReportedDevice {
  if (!isRecord(raw)) throw bad(field, "each device must be an object");
  const type = raw.type;
  if (typeof type !== "string" || !(DEVICE_TYPES as readonly string[]).includes(type)) {
    throw bad(`${field}.type`, `unknown device type ${JSON.stringify(type)}; expected one of ${DEVICE_TYPES.join(", ")}`);
  }
  const { info, key: cpidKey } = validateControlPath(raw.controlPath, `${field}.controlPath`);
  const additionalControlPaths = validateAdditionalControlPaths(raw.additionalControlPaths, `${field}.additionalControlPaths`);
  if (raw.stub !== undefined && raw.stub !== null && typeof raw.stub !== "boolean") throw bad(`${field}.stub`, "stub must be a boolean");
  if (!Array.isArray(raw.deployables)) throw bad(`${field}.deployables`, "deployables must be a list");
  const deployables = raw.deployables.map((d, k) => validateDeployable(d, k, `${field}.deployables[${k}]`));
  const health = validateHealth(raw.health, `${field}.health`);
  const topology = validateTopology(raw.topology, `${field}.topology`);
  const partitioning = validateDevicePartitioning(raw.partitioning, `${field}.partitioning`);
  const capacities = validateCapacities(raw.capacities, `${field}.capacities`);
  checkCapacityClasses(capacities, deployables, partitioning, field);
  return {
    type: type as DeviceType,
    vendor: boundedString(raw.vendor, `${field}.vendor`, MAX_NAME_LENGTH, true),
    model: boundedString(raw.model, `${field}.model`, MAX_NAME_LENGTH, true),
    stdBoardInfo: optionalObject(raw.stdBoardInfo, `${field}.stdBoardInfo`),
    vendorBoardInfo: optionalObject(raw.vendorBoardInfo, `${field}.vendorBoardInfo`),
    controlPath: { type: "PCI", info },
    cpidKey,
    additionalControlPaths,
    stub: raw.stub === true,
    ...(health === null ? {} : { health }),
    ...(topology === null ? {} : { topology }),
    ...(partitioning === null ? {} : { partitioning }),
    ...(capacities.length === 0 ? {} : { capacities }),
    deployables: parentsFirst(deployables, field),
  };
}

/** A capacity's class is an inventory of its own on the device's provider: no deployable or profile of the device may offer it as its class. */
function checkCapacityClasses(capacities: readonly DriverCapacity[], deployables: readonly ReportedDeployable[], partitioning: DriverPartitioning | null, field: string): void {
  const classes = new Set([...deployables.flatMap((d) => d.attributes.filter((a) => a.key === "rc").map((a) => a.value)), ...(partitioning?.profiles.map((p) => p.resourceClass) ?? [])]);
  capacities.forEach((c, i) => {
    if (classes.has(c.resourceClass)) throw bad(`${field}.capacities[${i}].resourceClass`, `${c.resourceClass} is the resource class of one of the device's providers; a capacity needs a class of its own (e.g. NET_BW_EGR_KILOBIT_PER_SEC)`);
  });
}

function validateControlPath(cp: unknown, field: string): ReportedControlPath {
  if (!isRecord(cp)) throw bad(field, "a control path must be an object {type, info}");
  if (cp.type !== "PCI") throw bad(`${field}.type`, `unsupported control path type ${JSON.stringify(cp.type)}; expected PCI`);
  const info = normalizePciInfo(cp.info, `${field}.info`);
  if (!isJsonValue(info)) throw bad(`${field}.info`, "control path info must be plain JSON");
  return { type: "PCI", info, key: canonicalJson(info) };
}

function validateAdditionalControlPaths(raw: unknown, field: string): ReportedControlPath[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw bad(field, "additionalControlPaths must be a list of {type, info}");
  if (raw.length > MAX_CONTROL_PATHS - 1) throw bad(field, `a device has at most ${MAX_CONTROL_PATHS} control paths; got ${raw.length + 1}`);
  return raw.map((cp, j) => validateControlPath(cp, `${field}[${j}]`));
}

function validateDeployable(raw: unknown, index: number, field: string): ReportedDeployable {
  if (!isRecord(raw)) throw bad(field, "each deployable must be an object");
  const name = boundedString(raw.name, `${field}.name`, MAX_NAME_LENGTH, false);
  const n = raw.numAccelerators;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw bad(`${field}.numAccelerators`, `numAccelerators must be an integer >= 0, got ${JSON.stringify(n)}`);
  }
  const driverName = raw.driverName === undefined || raw.driverName === null ? null : boundedString(raw.driverName, `${field}.driverName`, MAX_DRIVER_NAME_LENGTH, false);
  const parentName = raw.parentName === undefined || raw.parentName === null ? null : boundedString(raw.parentName, `${field}.parentName`, MAX_NAME_LENGTH, false);
  if (!Array.isArray(raw.attributes)) throw bad(`${field}.attributes`, "attributes must be a list");
  if (!Array.isArray(raw.attachHandles)) throw bad(`${field}.attachHandles`, "attachHandles must be a list");
  const keys = new Set<string>();
  const attributes = raw.attributes.map((a, j) => {
    const attr = validateAttribute(a, `${field}.attributes[${j}]`);
    if (keys.has(attr.key)) throw bad(`${field}.attributes[${j}].key`, `duplicate attribute key ${attr.key}`);
    keys.add(attr.key);
    return attr;
  });
  checkAttributeNesting(attributes, field);
  const handles = raw.attachHandles.map((h, j) => validateHandle(h, `${field}.attachHandles[${j}]`));
  return { index, name, numAccelerators: n, driverName, parentName, attributes, handles };
}

function validateAttribute(raw: unknown, field: string): ReportedAttribute {
  if (!isRecord(raw)) throw bad(field, "each attribute must be an object {key, value}");
  const key = boundedString(raw.key, `${field}.key`, MAX_NAME_LENGTH, false);
  const value = boundedString(raw.value, `${field}.value`, MAX_NAME_LENGTH, false);
  const parentKey = raw.parentKey === undefined || raw.parentKey === null ? null : boundedString(raw.parentKey, `${field}.parentKey`, MAX_NAME_LENGTH, false);
  if (key === "rc" || key.startsWith("trait")) {
    // Placement reads rc and trait* attributes wherever they are: they stay at the top.
    if (parentKey !== null) throw bad(`${field}.parentKey`, `attribute ${key} is read by Placement and cannot be nested; only other attributes can`);
  }
  if (key === "rc") {
    const rc = normalizeTraitName(value);
    if (!isValidResourceClass(rc)) throw bad(`${field}.value`, `unsupported resource class ${value}`);
    return { key, value: rc, parentKey };
  }
  if (key.startsWith("trait")) {
    const trait = normalizeTraitName(value);
    if (!isValidTrait(trait)) {
      throw bad(`${field}.value`, `${value} is not a trait: expected CUSTOM_[A-Z0-9_]+ or a standard trait such as OWNER_CYBORG`);
    }
    return { key, value: trait, parentKey };
  }
  return { key, value, parentKey };
}

/** Each parentKey names another attribute of the deployable, and no attribute is its own ancestor. */
function checkAttributeNesting(attributes: readonly ReportedAttribute[], field: string): void {
  const byKey = new Map(attributes.map((a, j) => [a.key, { a, j }] as const));
  attributes.forEach((a, j) => {
    if (a.parentKey === null) return;
    if (!byKey.has(a.parentKey)) throw bad(`${field}.attributes[${j}].parentKey`, `no attribute with key ${a.parentKey} on this deployable`);
    const seen = new Set([a.key]);
    for (let p: string | null = a.parentKey; p !== null; p = byKey.get(p)!.a.parentKey) {
      if (seen.has(p)) throw bad(`${field}.attributes[${j}].parentKey`, `attribute ${a.key} is its own ancestor`);
      seen.add(p);
    }
  });
}

function validateHandle(raw: unknown, field: string): ReportedHandle {
  if (!isRecord(raw)) throw bad(field, "each attach handle must be an object {type, info}");
  const type = raw.type;
  if (typeof type !== "string" || !(ATTACH_HANDLE_TYPES as readonly string[]).includes(type)) {
    throw bad(`${field}.type`, `unknown attach handle type ${JSON.stringify(type)}; expected one of ${ATTACH_HANDLE_TYPES.join(", ")}`);
  }
  if (!isJsonObject(raw.info) || !isJsonValue(raw.info)) throw bad(`${field}.info`, "attach handle info must be a JSON object");
  const info = type === "TEST_PCI" ? sortKeys(raw.info) : type === "MIG" ? migInfo(raw.info, `${field}.info`) : normalizePciInfo(raw.info, `${field}.info`);
  return { type: type as AttachHandleType, info, infoKey: canonicalJson(info) };
}

/** A MIG device is named by its UUID ("MIG-..."), as nvidia-smi -L and the container runtimes name it. */
function migInfo(info: JsonObject, field: string): JsonObject {
  const uuid = info["uuid"];
  if (typeof uuid !== "string" || !/^MIG-[0-9A-Za-z-]{1,100}$/.test(uuid)) throw bad(`${field}.uuid`, `a MIG attach handle is named by its MIG device UUID ("MIG-..." as nvidia-smi -L lists it); got ${JSON.stringify(uuid)}`);
  return sortKeys(info);
}

/** A partition the agent made (partition-allocation.ts), validated as a reported one, its attach handle as any handle. */
export function validateMadePartition(raw: unknown, profiles: readonly DriverPartitionProfile[], slots: number): DriverPartition {
  const part = validatePartition(raw, "partition", new Map(profiles.map((p) => [p.name, p])), slots);
  const h = validateHandle(part.attachHandle, "partition.attachHandle");
  return { ...part, attachHandle: { type: h.type, info: h.info } };
}

/** The partitioning as partitioning-validation.ts checks it, each partition's attach handle validated as any handle. */
function validateDevicePartitioning(raw: unknown, field: string): DriverPartitioning | null {
  const p = validatePartitioning(raw, field);
  if (p === null) return null;
  const partitions = p.partitions.map((part, i) => {
    const h = validateHandle(part.attachHandle, `${field}.partitions[${i}].attachHandle`);
    return { ...part, attachHandle: { type: h.type, info: h.info } };
  });
  const keys = new Set<string>();
  partitions.forEach((part, i) => {
    const key = canonicalJson(part.attachHandle.info);
    if (keys.has(key)) throw bad(`${field}.partitions[${i}].attachHandle.info`, `attach handle ${key} is reported twice`);
    keys.add(key);
  });
  return { ...p, partitions };
}

function boundedString(value: unknown, field: string, max: number, allowEmpty: boolean): string {
  if (typeof value !== "string" || (!allowEmpty && value.length === 0) || value.length > max) {
    throw bad(field, `expected a ${allowEmpty ? "" : "non-empty "}string of at most ${max} characters`);
  }
  return value;
}

function optionalObject(value: unknown, field: string): JsonObject | null {
  if (value === undefined || value === null) return null;
  if (!isJsonObject(value) || !isJsonValue(value)) throw bad(field, "expected a JSON object");
  return sortKeys(value);
}

/** Orders deployables so that a parent precedes its children; refuses unknown parents and cycles. */
function parentsFirst(deployables: ReportedDeployable[], field: string): ReportedDeployable[] {
  const byName = new Map<string, number>();
  deployables.forEach((d, k) => {
    // Duplicate names are reported host-wide by validateReport; within a device, catch them here first.
    if (byName.has(d.name)) throw bad(`${field}.deployables[${k}].name`, `deployable name ${d.name} is already used by ${field}.deployables[${byName.get(d.name)}]`);
    byName.set(d.name, k);
  });
  const out: ReportedDeployable[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (d: ReportedDeployable) => {
    const k = d.index;
    if (state.get(d.name) === "done") return;
    if (state.get(d.name) === "visiting") throw bad(`${field}.deployables[${k}].parentName`, `deployable ${d.name} is its own ancestor`);
    state.set(d.name, "visiting");
    if (d.parentName !== null) {
      const pk = byName.get(d.parentName);
      if (pk === undefined) throw bad(`${field}.deployables[${k}].parentName`, `no deployable named ${d.parentName} on this device`);
      visit(deployables[pk]!);
    }
    state.set(d.name, "done");
    out.push(d);
  };
  for (const d of deployables) visit(d);
  return out;
}

/**
 * Validation of what a driver reports on DriverDevice.partitioning and .capacities, with the field
 * path of the first offence. A profile must be bounded (by a counter, a slot placement or
 * maxInstances), so Placement never sees an endless inventory, and the partitions reported must
 * themselves keep to the counters and slots.
 */
import { DomainError } from "../shared/types.js";
import { isValidResourceClass } from "../shared/traits.js";
import { spanBits } from "./partition-fit.js";
import type { DriverCapacity, DriverPartition, DriverPartitioning, DriverPartitionProfile, SlotPlacement } from "./partitioning-report.js";

/** Slot spans are kept as 32-bit bitmaps. */
export const MAX_SLOTS = 30;
const MAX_AMOUNT = 1_000_000_000;
const RESOURCE_CLASS_RE = /^[A-Z][A-Z0-9_]{0,254}$/;

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

function record(v: unknown, field: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad(field, "expected an object");
  return v as Record<string, unknown>;
}

function list(v: unknown, field: string, max: number): unknown[] {
  if (!Array.isArray(v) || v.length > max) throw bad(field, `expected a list of at most ${max} entries`);
  return v;
}

function name(v: unknown, field: string): string {
  if (typeof v !== "string" || v.length === 0 || v.length > 255) throw bad(field, "expected a non-empty string of at most 255 characters");
  return v;
}

function whole(v: unknown, field: string, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) throw bad(field, `expected a whole number from ${min} to ${max}`);
  return v;
}

function resourceClass(v: unknown, field: string): string {
  const s = name(v, field);
  if (!RESOURCE_CLASS_RE.test(s)) throw bad(field, `resource class "${s}" must be upper-case letters, digits and "_" (e.g. CUSTOM_MIG_3G_40GB)`);
  return s;
}

function unique(names: string[], field: string): void {
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (seen.has(n)) throw bad(`${field}[${i}]`, `"${n}" appears twice`);
    seen.add(n);
  });
}

function placement(v: unknown, field: string, slots: number): SlotPlacement {
  const r = record(v, field);
  const start = whole(r["start"], `${field}.start`, 0, MAX_SLOTS - 1);
  const size = whole(r["size"], `${field}.size`, 1, MAX_SLOTS);
  if (start + size > slots) throw bad(field, `the span ${start}..${start + size - 1} passes the device's ${slots} slots`);
  return { start, size };
}

function profile(v: unknown, field: string, counters: ReadonlySet<string>, slots: number): DriverPartitionProfile {
  const r = record(v, field);
  const consumes = list(r["consumes"], `${field}.consumes`, 16).map((c, i) => {
    const cr = record(c, `${field}.consumes[${i}]`);
    const counter = name(cr["counter"], `${field}.consumes[${i}].counter`);
    if (!counters.has(counter)) throw bad(`${field}.consumes[${i}].counter`, `the device declares no counter "${counter}"`);
    return { counter, amount: whole(cr["amount"], `${field}.consumes[${i}].amount`, 1, MAX_AMOUNT) };
  });
  unique(consumes.map((c) => c.counter), `${field}.consumes`);
  const placements = list(r["placements"], `${field}.placements`, 64).map((s, i) => placement(s, `${field}.placements[${i}]`, slots));
  const maxInstances = r["maxInstances"] === null || r["maxInstances"] === undefined ? null : whole(r["maxInstances"], `${field}.maxInstances`, 1, 4096);
  if (consumes.length === 0 && placements.length === 0 && maxInstances === null) {
    throw bad(field, "a profile must be limited by a counter, a slot placement or maxInstances");
  }
  return { name: name(r["name"], `${field}.name`), toolId: name(r["toolId"], `${field}.toolId`), resourceClass: resourceClass(r["resourceClass"], `${field}.resourceClass`), consumes, placements, maxInstances };
}

export function validatePartition(v: unknown, field: string, profiles: ReadonlyMap<string, DriverPartitionProfile>, slots: number): DriverPartition {
  const r = record(v, field);
  const prof = name(r["profile"], `${field}.profile`);
  if (!profiles.has(prof)) throw bad(`${field}.profile`, `the device declares no profile "${prof}"`);
  const at = r["placement"] === null || r["placement"] === undefined ? null : placement(r["placement"], `${field}.placement`, slots);
  const handle = record(r["attachHandle"], `${field}.attachHandle`);
  name(handle["type"], `${field}.attachHandle.type`);
  return { profile: prof, uuid: name(r["uuid"], `${field}.uuid`), placement: at, toolRef: record(r["toolRef"] ?? {}, `${field}.toolRef`) as DriverPartition["toolRef"], attachHandle: handle as unknown as DriverPartition["attachHandle"] };
}

/** The reported partitions keep to the counters and slots (a driver that says otherwise is refused). */
function checkReportedFit(p: DriverPartitioning, field: string): void {
  const byName = new Map(p.profiles.map((x) => [x.name, x]));
  const use = new Map<string, number>();
  let bits = 0;
  p.partitions.forEach((part, i) => {
    for (const c of byName.get(part.profile)!.consumes) use.set(c.counter, (use.get(c.counter) ?? 0) + c.amount);
    if (part.placement) {
      if (bits & spanBits(part.placement)) throw bad(`${field}.partitions[${i}].placement`, "overlaps another partition's slots");
      bits |= spanBits(part.placement);
    }
  });
  for (const c of p.counters) {
    if ((use.get(c.name) ?? 0) > c.total) throw bad(`${field}.partitions`, `the partitions take ${use.get(c.name)} of counter "${c.name}", which has ${c.total}`);
  }
  if (p.oneProfileAtATime && new Set(p.partitions.map((x) => x.profile)).size > 1) throw bad(`${field}.partitions`, "the device makes one profile at a time but reports several");
}

export function validatePartitioning(raw: unknown, field: string): DriverPartitioning | null {
  if (raw === null || raw === undefined) return null;
  const r = record(raw, field);
  const counters = list(r["counters"], `${field}.counters`, 16).map((c, i) => {
    const cr = record(c, `${field}.counters[${i}]`);
    return { name: name(cr["name"], `${field}.counters[${i}].name`), total: whole(cr["total"], `${field}.counters[${i}].total`, 0, MAX_AMOUNT) };
  });
  unique(counters.map((c) => c.name), `${field}.counters`);
  const slots = whole(r["slots"], `${field}.slots`, 0, MAX_SLOTS);
  const names = new Set(counters.map((c) => c.name));
  const profiles = list(r["profiles"], `${field}.profiles`, 64).map((x, i) => profile(x, `${field}.profiles[${i}]`, names, slots));
  unique(profiles.map((x) => x.name), `${field}.profiles`);
  unique(profiles.map((x) => x.resourceClass), `${field}.profiles`);
  const byName = new Map(profiles.map((x) => [x.name, x]));
  const partitions = list(r["partitions"], `${field}.partitions`, 256).map((x, i) => validatePartition(x, `${field}.partitions[${i}]`, byName, slots));
  unique(partitions.map((x) => x.uuid), `${field}.partitions`);
  if (typeof r["oneProfileAtATime"] !== "boolean") throw bad(`${field}.oneProfileAtATime`, "expected true or false");
  const driverName = r["driverName"] === null || r["driverName"] === undefined ? null : name(r["driverName"], `${field}.driverName`);
  const result: DriverPartitioning = { driverName, counters, slots, oneProfileAtATime: r["oneProfileAtATime"], profiles, partitions };
  checkReportedFit(result, field);
  return result;
}

/** A capacity's class is one a profile can name (a standard class or CUSTOM_*), else no ARQ could ever draw from it. */
function capacityClass(v: unknown, field: string): string {
  const s = resourceClass(v, field);
  if (!isValidResourceClass(s)) throw bad(field, `resource class "${s}" is neither a standard class a profile can ask for (such as NET_BW_EGR_KILOBIT_PER_SEC) nor CUSTOM_*`);
  return s;
}

export function validateCapacities(raw: unknown, field: string): DriverCapacity[] {
  if (raw === null || raw === undefined) return [];
  const caps = list(raw, field, 16).map((c, i) => {
    const r = record(c, `${field}[${i}]`);
    return {
      name: name(r["name"], `${field}[${i}].name`),
      resourceClass: capacityClass(r["resourceClass"], `${field}[${i}].resourceClass`),
      total: whole(r["total"], `${field}[${i}].total`, 1, MAX_AMOUNT),
      unit: name(r["unit"], `${field}[${i}].unit`),
    };
  });
  unique(caps.map((c) => c.resourceClass), field);
  return caps;
}

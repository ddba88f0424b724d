/**
 * Property: closing the books loses nothing. For random sequences of a host's events (reports with
 * devices and handles coming and going, allocations, releases, taints, partitions made and
 * destroyed, regions programmed), the state folded from a summary and the events after it is the
 * state folded from the first event, and it decides every command the same way.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { booksDue, closeBooks, encodeHostState, eventsInPeriod } from "../../../src/domain/inventory/books.js";
import type { HostCommand } from "../../../src/domain/inventory/decider.js";
import type { HostBooksClosed, InventoryEvent } from "../../../src/domain/inventory/events.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import type { DriverPartition } from "../../../src/domain/inventory/partitioning-report.js";
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import { initialHostState, type HostState } from "../../../src/domain/inventory/state.js";
import type { TaintEffect } from "../../../src/domain/shared/tolerations.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { h100 } from "./h100.js";
import { bdf, decide, deployable, fold, fpga, HOST, pci } from "./fixtures.js";

const GPU_BDF = "0000:17:00.0";
const FPGA_RP = rpUuidFor(`${HOST}_${bdf("af")}`);
const MIG_PROFILES = ["1g.10gb", "3g.40gb", "7g.80gb"] as const;
const migRp = (profile: string) => rpUuidFor(`${HOST}_${GPU_BDF}_${profile}`);
const ARQS = 6;
const BITSTREAMS = ["0a000000-0000-4000-8000-00000000000a", "0b000000-0000-4000-8000-00000000000b"];
const EFFECTS: TaintEffect[] = ["NoSchedule", "NoExecute"];

type Op =
  | { op: "report"; handles: boolean[] | null; gpu: boolean; sick: boolean }
  | { op: "allocate"; arq: number; target: number }
  | { op: "release"; arq: number }
  | { op: "taint"; gpu: boolean; key: number; effect: number }
  | { op: "untaint"; gpu: boolean; key: number }
  | { op: "program"; bitstream: number; request: number }
  | { op: "programmed"; ok: boolean }
  | { op: "partition"; ok: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant("report" as const), handles: fc.option(fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), { freq: 5 }), gpu: fc.boolean(), sick: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("allocate" as const), arq: fc.nat(ARQS - 1), target: fc.nat(MIG_PROFILES.length) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("release" as const), arq: fc.nat(ARQS - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("taint" as const), gpu: fc.boolean(), key: fc.nat(1), effect: fc.nat(EFFECTS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("untaint" as const), gpu: fc.boolean(), key: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("program" as const), bitstream: fc.nat(1), request: fc.nat(1000) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("programmed" as const), ok: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("partition" as const), ok: fc.boolean() }) },
);

const atOf = (i: number) => new Date(Date.UTC(2026, 2, 1) + i * 3_600_000).toISOString();

function gpuDevice(partitions: DriverPartition[], sick: boolean): DriverDevice {
  return {
    type: "GPU",
    vendor: "10de",
    model: "H100 80GB HBM3",
    controlPath: { type: "PCI", info: pci("17") },
    partitioning: { ...h100(), driverName: "nvidia_gpu_driver", partitions },
    deployables: [],
    ...(sick ? { health: { status: "WARNING", reasons: [{ code: "ECC_VOLATILE_UNCORRECTABLE", message: "ecc errors" }] } } : {}),
  } as DriverDevice;
}

/** The partitions the driver would list now: every one the host records as made. */
function madePartitions(state: HostState): DriverPartition[] {
  const gpu = [...state.devices.values()].find((d) => d.partitioning);
  return gpu?.partitioning?.reported.partitions ?? [];
}

function commandOf(op: Op, state: HostState, at: string): HostCommand | null {
  const fpgaDevice = [...state.devices.values()].find((d) => d.type === "FPGA");
  const gpu = [...state.devices.values()].find((d) => d.type === "GPU");
  switch (op.op) {
    case "report": {
      const devices: DriverDevice[] = [];
      if (op.handles) {
        const attachHandles = op.handles.flatMap((p, i) => (p ? [{ type: "PCI" as const, info: pci("af", String(i)) }] : []));
        devices.push(fpga("af", { deployables: [{ ...deployable("af", { handles: 4 }), attachHandles }] }));
      }
      if (op.gpu) devices.push(gpuDevice(madePartitions(state), op.sick));
      return { type: "ReportHostInventory", data: { hostname: HOST, devices, at } };
    }
    case "allocate": {
      const rpUuid = op.target === MIG_PROFILES.length ? FPGA_RP : migRp(MIG_PROFILES[op.target]!);
      return { type: "AllocateAttachHandle", data: { hostname: HOST, rpUuid, arqUuid: `arq-${op.arq}`, instanceUuid: `vm-${op.arq}`, at } };
    }
    case "release":
      return { type: "ReleaseAttachHandle", data: { hostname: HOST, arqUuid: `arq-${op.arq}`, at } };
    case "taint": {
      const device = op.gpu ? gpu : fpgaDevice;
      if (!device) return null;
      return { type: "TaintDevice", data: { hostname: HOST, deviceUuid: device.uuid, key: `example.com/k${op.key}`, value: "", effect: EFFECTS[op.effect]!, by: "alice", reason: "checking", at } };
    }
    case "untaint": {
      const device = op.gpu ? gpu : fpgaDevice;
      if (!device) return null;
      return { type: "UntaintDevice", data: { hostname: HOST, deviceUuid: device.uuid, key: `example.com/k${op.key}`, effect: null, by: "alice", reason: "done", at } };
    }
    case "program": {
      const region = fpgaDevice && [...fpgaDevice.deployables.values()][0];
      if (!region) return null;
      const id = BITSTREAMS[op.bitstream]!;
      const bitstream = { id, name: `${id}.gbs`, checksum: `sha256:${"a".repeat(64)}`, size: 10, functionId: op.bitstream === 0 ? "nlb0" : null };
      return { type: "RequestRegionProgramming", data: { hostname: HOST, deployableUuid: region.uuid, requestId: `req-${op.request}`, bitstream, principal: "admin", at } };
    }
    case "programmed": {
      const region = fpgaDevice && [...fpgaDevice.deployables.values()][0];
      const inFlight = region?.programming;
      if (!region || !inFlight) return null;
      const base = { hostname: HOST, deployableUuid: region.uuid, requestId: inFlight.requestId, command: ["fpgaconf", "x.gbs"], durationMs: 1200, at };
      return op.ok ? { type: "ReportRegionProgrammed", data: base } : { type: "ReportRegionProgrammingFailed", data: { ...base, reason: "bad bitstream" } };
    }
    case "partition": {
      const rec = gpu?.partitioning;
      if (!rec) return null;
      const destruction = [...rec.destructions.values()][0];
      if (destruction) return { type: "ReportPartitionDestroyed", data: { hostname: HOST, requestId: destruction.requestId, command: ["nvidia-smi", "mig", "-dgi"], durationMs: 80, at } };
      const creation = [...rec.creations.values()][0];
      if (!creation) return null;
      if (!op.ok || !creation.placement) return { type: "ReportPartitionCreationFailed", data: { hostname: HOST, requestId: creation.requestId, reason: "Insufficient Resources", at } };
      const uuid = `MIG-${creation.requestId}`;
      const partition: DriverPartition = {
        profile: creation.profile,
        uuid,
        placement: creation.placement,
        toolRef: { gpu: 0, gpuInstanceId: creation.placement.start + 1, computeInstanceId: 0 },
        attachHandle: { type: "MIG", info: { uuid, gpu_bdf: GPU_BDF } },
      };
      return { type: "ReportPartitionCreated", data: { hostname: HOST, requestId: creation.requestId, partition, command: ["nvidia-smi", "mig", "-cgi"], durationMs: 420, at } };
    }
  }
}

/** The events the decider gives for the ops, in turn (a refused command gives none). */
function eventsOf(ops: readonly Op[]): InventoryEvent[] {
  let state = initialHostState();
  const events: InventoryEvent[] = [];
  ops.forEach((op, i) => {
    const command = commandOf(op, state, atOf(i));
    if (!command) return;
    const decided = attempt(() => decide(state, command));
    if (!Array.isArray(decided)) return;
    events.push(...decided);
    state = fold(decided, state);
  });
  return events;
}

/** The decider's answer, or its refusal (a DomainError) as a value. */
function attempt<T>(fn: () => T): T | { refused: string; message: string } {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { refused: err.code, message: err.message };
  }
}

/** The summary as the log returns it: through JSON. */
const stored = (summary: HostBooksClosed): InventoryEvent => JSON.parse(JSON.stringify(summary)) as InventoryEvent;

/** The state with every map's entries in order and object keys sorted: equal text, equal state. */
const canonical = (state: HostState): string => JSON.stringify(sortKeys(encodeHostState(state)));
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v !== "object" || v === null) return v;
  return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, sortKeys(x)]));
}

const withoutBooks = (state: HostState): HostState => ({ ...state, books: null });

/** Commands to decide on both states: binds to every target, releases, a report, a taint. */
function probes(state: HostState, at: string): HostCommand[] {
  const out: HostCommand[] = [];
  for (let arq = 0; arq < ARQS; arq++) {
    for (let target = 0; target <= MIG_PROFILES.length; target++) out.push(commandOf({ op: "allocate", arq: arq + ARQS, target }, state, at)!);
    out.push(commandOf({ op: "release", arq }, state, at)!);
  }
  out.push(commandOf({ op: "report", handles: [true, true, true, true], gpu: true, sick: false }, state, at)!);
  out.push(commandOf({ op: "report", handles: null, gpu: false, sick: false }, state, at)!);
  for (const op of [{ op: "taint", gpu: true, key: 0, effect: 1 }, { op: "partition", ok: true }, { op: "programmed", ok: true }] as const) {
    const c = commandOf(op, state, at);
    if (c) out.push(c);
  }
  return out;
}

describe("closing the books of a host stream", () => {
  it("folds from a summary and the events after it to the state folded from the first event, which decides the same", () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 80 }), fc.double({ min: 0, max: 1, noNaN: true }), (ops, cut) => {
        const events = eventsOf(ops);
        fc.pre(events.length > 0);
        const k = Math.max(1, Math.round(cut * events.length));
        const before = events.slice(0, k);
        const after = events.slice(k);
        const closedAt = atOf(ops.length);
        const summary = stored(closeBooks(fold(before), k - 1, closedAt));

        const fromStart = fold(events);
        const throughSummary = fold([...before, summary, ...after]);
        const fromSummary = fold([summary, ...after]);

        // The stream as written (with its summary) and the stream from its summary on: the same state, books included.
        expect(canonical(fromSummary)).toBe(canonical(throughSummary));
        expect(fromSummary.books).toEqual({ revision: k, at: closedAt });
        // And the state a stream without any summary folds to, but for where its period began.
        expect(canonical(withoutBooks(fromSummary))).toBe(canonical(fromStart));
        expect(fromSummary.firstAt).toBe(fromStart.firstAt);

        const at = atOf(ops.length + 1);
        for (const command of probes(fromStart, at)) {
          expect(attempt(() => decide(fromSummary, command))).toEqual(attempt(() => decide(fromStart, command)));
        }
      }),
      { numRuns: 150 },
    );
  });

  it("covers every kind of host event the generator aims at", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 20, maxLength: 80 }), (ops) => {
        for (const e of eventsOf(ops)) seen.add(e.type);
      }),
      { numRuns: 100, seed: 42 },
    );
    for (const type of ["DeviceDiscovered", "AttachHandleAllocated", "AttachHandleReleased", "DeviceTainted", "DeviceUntainted", "PartitionCreationRequested", "PartitionCreated", "PartitionDestroyed", "RegionProgrammingRequested", "RegionProgrammed", "AttachHandleLost", "DeviceHealthChanged"]) {
      expect(seen, type).toContain(type);
    }
  });

  it("closes a period by its events or its age, and counts the period from the latest summary", () => {
    const events = eventsOf([{ op: "report", handles: [true, true, true, true], gpu: false, sick: false }]);
    const state = fold(events);
    const last = events.length - 1;
    const policy = { maxEvents: 10, maxDays: 30 };
    expect(eventsInPeriod(state, last)).toBe(events.length);
    expect(booksDue(state, last, atOf(1), policy)).toBe(events.length >= 10);
    expect(booksDue(state, 9, atOf(1), policy)).toBe(true);
    expect(booksDue(state, last, atOf(30 * 24), policy)).toBe(true);
    expect(booksDue(state, last, atOf(30 * 24 - 1), policy)).toBe(false);
    expect(booksDue(state, 9, atOf(1), { maxEvents: 0, maxDays: 30 })).toBe(false);
    const summarised = fold([stored(closeBooks(state, last, atOf(2)))], state);
    expect(eventsInPeriod(summarised, last + 1)).toBe(0);
    // A period that holds nothing but its summary never closes by age.
    expect(booksDue(summarised, last + 1, atOf(1000 * 24), policy)).toBe(false);
    expect(booksDue(summarised, last + 10, atOf(3), policy)).toBe(false);
    expect(booksDue(summarised, last + 11, atOf(3), policy)).toBe(true);
  });

  it("keeps driver-reported JSON that looks like an encoded map as it was", () => {
    const events = eventsOf([{ op: "report", handles: [true, false, false, false], gpu: false, sick: false }]);
    let state = fold(events);
    const device = [...state.devices.values()][0]!;
    state = { ...state, devices: new Map([[device.uuid, { ...device, vendorBoardInfo: { $map: [["a", 1]], $obj: "x", plain: { $map: 2 } } }]]) };
    const back = fold([stored(closeBooks(state, events.length - 1, atOf(1)))]);
    expect([...back.devices.values()][0]!.vendorBoardInfo).toEqual({ $map: [["a", 1]], $obj: "x", plain: { $map: 2 } });
  });
});

import { describe, expect, it } from "vitest";
import type { HostCommand } from "../../../src/domain/inventory/decider.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { partitioningOf } from "../../../src/domain/inventory/partition-record.js";
import type { DriverPartition } from "../../../src/domain/inventory/partitioning-report.js";
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import { desiredProviders } from "../../../src/domain/inventory/resource-providers.js";
import type { HostState } from "../../../src/domain/inventory/state.js";
import { expectDomainError } from "../decider-spec.js";
import { h100 } from "./h100.js";
import { allocate, apply, at, decide, HOST, pci, release, report, reported, types } from "./fixtures.js";

const BDF = "0000:17:00.0";
const rp = (profile: string) => rpUuidFor(`${HOST}_${BDF}_${profile}`);

function gpu(partitions: DriverPartition[] = []): DriverDevice {
  return { type: "GPU", vendor: "10de", model: "H100 80GB HBM3", controlPath: { type: "PCI", info: pci("17") }, partitioning: { ...h100(), driverName: "nvidia_gpu_driver", partitions }, deployables: [] };
}

const mig = (profile: string, uuid: string, start: number, size: number): DriverPartition => ({
  profile,
  uuid,
  placement: { start, size },
  toolRef: { gpu: 0, gpuInstanceId: start + 1, computeInstanceId: 0 },
  attachHandle: { type: "MIG", info: { uuid, gpu_bdf: BDF } },
});

const made = (requestId: string, partition: DriverPartition): HostCommand => ({
  type: "ReportPartitionCreated",
  data: { hostname: HOST, requestId, partition, command: ["nvidia-smi", "mig", "-cgi", "9", "-C"], durationMs: 420, at },
});

const requestOf = (s: HostState, arq: string) => [...s.devices.values()][0]!.partitioning!.creations.get(arq)!;

describe("binds on a partitioned device", () => {
  const host = reported([gpu()]);

  it("gives each profile a provider whose inventory is what fits on the empty device", () => {
    const byName = new Map(desiredProviders(host).map((p) => [p.name, p]));
    expect(byName.get(`${HOST}_${BDF}_1g.10gb`)).toMatchObject({ resourceClass: "CUSTOM_MIG_1G_10GB", total: 7, reserved: 0 });
    expect(byName.get(`${HOST}_${BDF}_7g.80gb`)).toMatchObject({ resourceClass: "CUSTOM_MIG_7G_80GB", total: 1, reserved: 0 });
  });

  it("reserves a partition to be made, asks the agent, and allocates its handle when the agent made it", () => {
    const events = decide(host, allocate(rp("3g.40gb"), "arq-1", "vm-1"));
    // Placement is told at once how many of each profile still fit.
    expect(types(events)).toEqual(["PartitionCreationRequested", "PartitionInventoryChanged"]);
    const available = new Map((events[1]!.data as { available: Array<{ profile: string; available: number }> }).available.map((a) => [a.profile, a.available]));
    expect(Object.fromEntries(available)).toEqual({ "1g.10gb": 4, "1g.20gb": 2, "2g.20gb": 2, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 0 });
    expect(events[0]!.data).toMatchObject({ profile: "3g.40gb", toolId: "9", placement: { start: 4, size: 4 }, driverName: "nvidia_gpu_driver", arqUuid: "arq-1" });
    const waiting = apply(host, allocate(rp("3g.40gb"), "arq-1", "vm-1"));
    // A retry while the agent works asks nothing twice.
    expect(decide(waiting, allocate(rp("3g.40gb"), "arq-1", "vm-1"))).toEqual([]);
    const { requestId } = requestOf(waiting, "arq-1");
    const done = apply(waiting, made(requestId, mig("3g.40gb", "MIG-aaaa", 4, 4)));
    expect(done.allocations.get("arq-1")).toMatchObject({ rpUuid: rp("3g.40gb"), handleType: "MIG", info: { uuid: "MIG-aaaa", gpu_bdf: BDF }, instanceUuid: "vm-1" });
    // The next report lists the partition: nothing changes.
    expect(report(done, [gpu([mig("3g.40gb", "MIG-aaaa", 4, 4)])]).events).toEqual([]);
  });

  it("never grants past the counters or slots, across binds waiting on the agent", () => {
    let s = apply(host, allocate(rp("4g.40gb"), "arq-1"));
    s = apply(s, allocate(rp("3g.40gb"), "arq-2"));
    expect(partitioningOf([...s.devices.values()][0]!)!.partitions.map((p) => p.status)).toEqual(["CREATING", "CREATING"]);
    expectDomainError(() => decide(s, allocate(rp("1g.10gb"), "arq-3")), "CONFLICT", "deviceRpUuid", /counter "compute" has 0 of 7 left/);
    const reserved = new Map(desiredProviders(s).map((p) => [p.name, p.total - p.reserved]));
    expect(reserved.get(`${HOST}_${BDF}_1g.10gb`)).toBe(0);
    expect(reserved.get(`${HOST}_${BDF}_3g.40gb`)).toBe(1);
  });

  it("fails the waiting bind with the agent's reason, and frees the slots", () => {
    const waiting = apply(host, allocate(rp("7g.80gb"), "arq-1"));
    const failed = apply(waiting, { type: "ReportPartitionCreationFailed", data: { hostname: HOST, requestId: requestOf(waiting, "arq-1").requestId, reason: "Insufficient Resources", at } });
    expect(failed.programmingFailures.get("arq-1")).toBe("Insufficient Resources");
    expect(types(decide(failed, allocate(rp("7g.80gb"), "arq-2")))).toEqual(["PartitionCreationRequested", "PartitionInventoryChanged"]);
  });

  it("destroys a released partition, which holds its slots until the agent says it is gone", () => {
    const waiting = apply(host, allocate(rp("7g.80gb"), "arq-1"));
    const bound = apply(waiting, made(requestOf(waiting, "arq-1").requestId, mig("7g.80gb", "MIG-bbbb", 0, 8)));
    const events = decide(bound, release("arq-1"));
    expect(types(events)).toEqual(["AttachHandleReleased", "PartitionDestructionRequested", "PartitionInventoryChanged"]);
    expect(events[1]!.data).toMatchObject({ uuid: "MIG-bbbb", toolRef: { gpuInstanceId: 1 } });
    const going = apply(bound, release("arq-1"));
    expectDomainError(() => decide(going, allocate(rp("1g.10gb"), "arq-2")), "CONFLICT", "deviceRpUuid");
    const requestId = [...[...going.devices.values()][0]!.partitioning!.destructions.values()][0]!.requestId;
    const gone = apply(going, { type: "ReportPartitionDestroyed", data: { hostname: HOST, requestId, command: ["nvidia-smi", "mig", "-dgi"], durationMs: 80, at } });
    expect(types(decide(gone, allocate(rp("1g.10gb"), "arq-2")))).toEqual(["PartitionCreationRequested", "PartitionInventoryChanged"]);
    expect(report(gone, [gpu()]).events).toEqual([]);
  });

  it("keeps an idle partition for the next ARQ of its profile when asked to", () => {
    const waiting = apply(host, allocate(rp("2g.20gb"), "arq-1"));
    const bound = apply(waiting, made(requestOf(waiting, "arq-1").requestId, mig("2g.20gb", "MIG-cccc", 4, 2)));
    const idle = apply(bound, { type: "ReleaseAttachHandle", data: { hostname: HOST, arqUuid: "arq-1", at, keepIdlePartitions: true } });
    const events = decide(idle, allocate(rp("2g.20gb"), "arq-2"));
    expect(types(events)).toEqual(["AttachHandleAllocated"]);
    expect(events[0]!.data).toMatchObject({ info: { uuid: "MIG-cccc" } });
  });

  it("never keeps idle a partition that must be cleaned: its holder's group asked for a clean after use, or the device requires one", () => {
    const keepIdle = (arq: string): HostCommand => ({ type: "ReleaseAttachHandle", data: { hostname: HOST, arqUuid: arq, at, keepIdlePartitions: true } });
    const dirtyAsk: HostCommand = { type: "AllocateAttachHandle", data: { hostname: HOST, rpUuid: rp("2g.20gb"), arqUuid: "arq-1", instanceUuid: "vm-1", cleanAfterUse: true, at } };
    const waiting = apply(host, dirtyAsk);
    const bound = apply(waiting, made(requestOf(waiting, "arq-1").requestId, mig("2g.20gb", "MIG-eeee", 4, 2)));
    expect(types(decide(bound, keepIdle("arq-1")))).toContain("PartitionDestructionRequested");

    const clean = apply(host, allocate(rp("2g.20gb"), "arq-2"));
    const held = apply(clean, made(requestOf(clean, "arq-2").requestId, mig("2g.20gb", "MIG-ffff", 4, 2)));
    const deviceUuid = [...held.devices.keys()][0]!;
    const required = apply(held, { type: "SetDeviceCleaningRequired", data: { hostname: HOST, deviceUuid, required: true, by: "admin", at } });
    expect(types(decide(required, keepIdle("arq-2")))).toContain("PartitionDestructionRequested");
    // Without either, it is kept.
    expect(types(decide(held, keepIdle("arq-2")))).not.toContain("PartitionDestructionRequested");
  });

  it("abandons the reservation of a bind released before the agent answered; the late answer records nothing", () => {
    const waiting = apply(host, allocate(rp("1g.10gb"), "arq-1"));
    const { requestId } = requestOf(waiting, "arq-1");
    expect(types(decide(waiting, release("arq-1")))).toEqual(["PartitionCreationAbandoned", "PartitionInventoryChanged"]);
    const gone = apply(waiting, release("arq-1"));
    expect(decide(gone, made(requestId, mig("1g.10gb", "MIG-dddd", 6, 1)))).toEqual([]);
  });

  it("refuses an agent's answer that does not fit the request", () => {
    const waiting = apply(host, allocate(rp("1g.10gb"), "arq-1"));
    const { requestId } = requestOf(waiting, "arq-1");
    expectDomainError(() => decide(waiting, made(requestId, mig("2g.20gb", "MIG-eeee", 0, 2))), "BAD_USER_INPUT", "partition.profile");
    expectDomainError(() => decide(waiting, made(requestId, { ...mig("1g.10gb", "MIG-eeee", 0, 1), attachHandle: { type: "MIG", info: { uuid: "GPU-1234" } } })), "BAD_USER_INPUT", "partition.attachHandle.info.uuid");
  });
});

/**
 * Mediated device (mdev) types through sysfs, as partitions made on demand:
 * `<device>/mdev_supported_types/<type>/{name,available_instances,device_api,description}` are the
 * profiles, `<type>/devices/<uuid>` the mdevs that exist. A type may make at most the description's
 * `max_instance` (NVIDIA vGPU writes it there), or else its available instances plus those made.
 * Making one writes a new UUID to `<type>/create`; removing one writes 1 to
 * `<root>/bus/mdev/devices/<uuid>/remove`. The kernel refuses a write it cannot honour, and that
 * refusal is the error surfaced.
 */
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DriverPartition, DriverPartitioning, DriverPartitionProfile } from "../../../domain/inventory/partitioning-report.js";
import type { PciAddress } from "../../../domain/shared/types.js";
import type { DriverEnv, Partitioner } from "./driver.js";
import { pciAddress } from "./naming.js";
import { exists, listDir, pciDeviceDir, readLine } from "./sysfs.js";

export interface MdevOptions {
  /** The Placement resource class of one mdev of any type, e.g. "VGPU". */
  resourceClass: string;
  /** Only one type may have mdevs at a time (NVIDIA time-sliced vGPU). */
  oneProfileAtATime: boolean;
}

/** `max_instance=N` in an mdev type's description, or null. */
export function maxInstanceOf(description: string | null): number | null {
  const m = /(?:^|[,\s])max_instance=(\d+)/.exec(description ?? "");
  return m ? Number(m[1]) : null;
}

export function bdfOf(address: PciAddress): string {
  return `${address.domain}:${address.bus}:${address.device}.${address.function}`.toLowerCase();
}

function mdevHandle(bdf: string, type: string, uuid: string): DriverPartition["attachHandle"] {
  return { type: "MDEV", info: { asked_type: type, ...pciAddress(bdf), mdev_uuid: uuid } };
}

async function readType(typesDir: string, type: string, bdf: string, rc: string) {
  const dir = join(typesDir, type);
  const available = await readLine(join(dir, "available_instances"));
  if (available === null || !/^\d+$/.test(available)) {
    throw new Error(`${type}: available_instances is ${JSON.stringify(available)}, not a count`);
  }
  const uuids = await listDir(join(dir, "devices"));
  const profile: DriverPartitionProfile = {
    name: type,
    toolId: type,
    resourceClass: rc,
    consumes: [],
    placements: [],
    maxInstances: maxInstanceOf(await readLine(join(dir, "description"))) ?? Number(available) + uuids.length,
  };
  const partitions = uuids.map((uuid): DriverPartition => ({
    profile: type,
    uuid,
    placement: null,
    toolRef: { mdevType: type },
    attachHandle: mdevHandle(bdf, type, uuid),
  }));
  return { profile, partitions };
}

/** The mdev types a PCI function offers as partitioning, or null when it offers none. */
export async function readMdevPartitioning(env: DriverEnv, bdf: string, options: MdevOptions): Promise<DriverPartitioning | null> {
  const typesDir = join(pciDeviceDir(env.sysfsRoot, bdf), "mdev_supported_types");
  const types = await listDir(typesDir);
  if (types.length === 0) return null;
  const read = await Promise.all(types.map((t) => readType(typesDir, t, bdf, options.resourceClass)));
  return {
    counters: [],
    slots: 0,
    oneProfileAtATime: options.oneProfileAtATime,
    profiles: read.map((r) => r.profile),
    partitions: read.flatMap((r) => r.partitions),
  };
}

async function writeSysfs(path: string, value: string): Promise<void> {
  try {
    await writeFile(path, value);
  } catch (err) {
    throw new Error(`writing ${value} to ${path} failed: ${(err as Error).message}`);
  }
}

/** Makes and removes mdevs of the types a device offers; `newUuid` names each new mdev. */
export function mdevPartitioner(driverNames: readonly string[], newUuid: () => string = randomUUID): Partitioner {
  return {
    driverNames,
    async create(env, target) {
      const bdf = bdfOf(target.controlPath);
      const typeDir = join(pciDeviceDir(env.sysfsRoot, bdf), "mdev_supported_types", target.profile.toolId);
      if (!(await exists(typeDir))) throw new Error(`${bdf} offers no mdev type ${target.profile.toolId}`);
      const uuid = newUuid();
      const path = join(typeDir, "create");
      await writeSysfs(path, uuid);
      const partition: DriverPartition = {
        profile: target.profile.name,
        uuid,
        placement: null,
        toolRef: { mdevType: target.profile.toolId },
        attachHandle: mdevHandle(bdf, target.profile.toolId, uuid),
      };
      return { command: ["write", path, uuid], partition };
    },
    async destroy(env, target) {
      const dir = join(env.sysfsRoot, "bus", "mdev", "devices", target.uuid);
      const path = join(dir, "remove");
      if (!(await exists(dir))) return { command: [] };
      await writeSysfs(path, "1");
      return { command: ["write", path, "1"] };
    },
  };
}

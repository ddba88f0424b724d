/**
 * NVIDIA MIG as partitioning: a GPU whose `nvidia-smi -q -x` says MIG mode is Enabled is reported
 * with `partitioning` and no deployable of its own (a GPU in MIG mode cannot be passed through
 * whole). The GPU-instance profiles of `nvidia-smi mig -lgip` are its profiles (placements from
 * `-lgipp`, at most the listing's Total of each), its compute slices a counter (7 on A100/H100:
 * the widest profile's "<N>g"), its memory slices the slots (8: the widest placement's end), and
 * the GPU instances of `-lgi` its partitions, each named by the UUID of its MIG device. nvidia-smi
 * numbers MIG devices per GPU (`nvidia-smi -L`'s "Device <i>") and `-q -x` says which GPU and
 * compute instance each number is; GPUs are matched across the listings by their GPU UUID.
 * A GPU instance with several compute instances is one partition, named by its first one's device.
 * The listings run once a pass, and only for the GPUs in MIG mode.
 */
import type { DriverPartition, DriverPartitioning, DriverPartitionProfile, SlotPlacement } from "../../../domain/inventory/partitioning-report.js";
import type { DriverEnv, DriverLog } from "./driver.js";
import { runCommand } from "./host-commands.js";
import {
  parseComputeInstances,
  parseGiPlacements,
  parseGiProfiles,
  parseGpuInstances,
  parseListGpus,
  parseMigQuery,
  type ComputeInstance,
  type GiPlacements,
  type GiProfile,
  type GpuInstance,
  type ListedGpu,
  type MigGpuQuery,
} from "./nvidia-mig-parse.js";

/** The driver name of MIG partitions (DriverPartitioning.driverName, the MIG partitioner's). */
export const MIG_DRIVER_NAME = "NVIDIA_MIG";
/** A listing answers within this, or it is called hung. */
export const MIG_READ_TIMEOUT_MS = 30_000;

/** The MIG listings of a host, or of one GPU (`-i <index>`). */
export interface MigListings {
  gpus: ListedGpu[];
  profiles: GiProfile[];
  placements: GiPlacements[];
  instances: GpuInstance[];
  computes: ComputeInstance[];
}

/** The host's MIG listings with each GPU's MIG mode and devices. */
export interface MigHost extends MigListings {
  query: Map<string, MigGpuQuery>;
}

/** Runs `nvidia-smi <args>` (the --nvidia-smi binary) through DriverEnv.run, or the host's runCommand. */
export function runNvidiaSmi(env: DriverEnv, args: readonly string[], timeoutMs = MIG_READ_TIMEOUT_MS): Promise<string> {
  const argv = [env.config.nvidia?.nvidiaSmi ?? "nvidia-smi", ...args];
  return (env.run ?? ((a, o) => runCommand(a, o)))(argv, { timeoutMs });
}

/** A listing; nvidia-smi answers "No GPU instances found: Not Found" (and a non-zero exit) when there is nothing to list. */
async function listing(env: DriverEnv, args: readonly string[]): Promise<string> {
  try {
    return await runNvidiaSmi(env, args);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/No (?:GPU|compute) instances found/.test(message)) return message;
    throw err;
  }
}

/**
 * Each GPU's MIG mode and devices from DriverEnv.mig; null when the agent reads no MIG state, or the
 * host has no nvidia-smi (GPUs bound to vfio-pci, no NVIDIA driver): then no GPU is in MIG mode.
 */
export async function readMigQuery(env: DriverEnv): Promise<Map<string, MigGpuQuery> | null> {
  const run = env.mig?.nvidiaSmiQuery;
  if (!run) return null;
  let xml: string;
  try {
    xml = await run();
  } catch (err) {
    if (/^\S+ not found(?::|$)/.test(err instanceof Error ? err.message : String(err))) return null;
    throw err;
  }
  return parseMigQuery(xml);
}

/**
 * `nvidia-smi -L`, and the `mig` listings of each GPU in MIG mode (`-i <index>`, so a GPU not in
 * MIG mode is never asked); `query` says which GPUs those are.
 */
export async function readMigListings(env: DriverEnv, query: ReadonlyMap<string, MigGpuQuery>): Promise<MigListings> {
  const gpus = parseListGpus(await runNvidiaSmi(env, ["-L"]));
  const mig = new Set([...query.values()].filter((g) => g.migEnabled).map((g) => g.uuid));
  const out: MigListings = { gpus, profiles: [], placements: [], instances: [], computes: [] };
  for (const gpu of gpus.filter((g) => mig.has(g.uuid))) {
    const only = ["mig", "-i", String(gpu.index)];
    out.profiles.push(...parseGiProfiles(await runNvidiaSmi(env, [...only, "-lgip"])));
    out.placements.push(...parseGiPlacements(await runNvidiaSmi(env, [...only, "-lgipp"])));
    out.instances.push(...parseGpuInstances(await listing(env, [...only, "-lgi"])));
    out.computes.push(...parseComputeInstances(await listing(env, [...only, "-lci"])));
  }
  return out;
}

/** "1g.10gb+me" -> CUSTOM_MIG_1G_10GB_ME. */
export function migResourceClass(profile: string): string {
  return `CUSTOM_MIG_${profile.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_|_$/g, "")}`;
}

/** The compute slices a profile takes: the N of "<N>g.<memory>". */
function computeSlices(profile: string): number {
  const m = /^(\d+)g\./.exec(profile);
  if (!m) throw new Error(`MIG profile "${profile}" does not say its compute slices ("<N>g.")`);
  return Number(m[1]);
}

/** The GPU's index in the listings (by its GPU UUID). */
export function gpuIndexOf(bdf: string, gpu: MigGpuQuery, listed: readonly ListedGpu[]): ListedGpu {
  const found = listed.find((g) => g.uuid === gpu.uuid);
  if (!found) throw new Error(`nvidia-smi -L does not list GPU ${bdf} (${gpu.uuid ?? "no UUID in nvidia-smi -q -x"})`);
  return found;
}

function profilesOf(index: number, host: MigListings, log?: DriverLog): DriverPartitionProfile[] {
  const out: DriverPartitionProfile[] = [];
  for (const p of host.profiles.filter((x) => x.gpu === index)) {
    const placements: SlotPlacement[] = host.placements
      .filter((x) => x.gpu === index && x.profileId === p.id)
      .flatMap((x) => x.starts.map((start) => ({ start, size: x.size })));
    if (placements.length === 0) {
      log?.warn({ gpu: index, profile: p.name }, "MIG profile without placements in nvidia-smi mig -lgipp; not offered");
      continue;
    }
    const amount = computeSlices(p.name);
    out.push({ name: p.name, toolId: String(p.id), resourceClass: migResourceClass(p.name), consumes: [{ counter: "compute", amount }], placements, maxInstances: p.total });
  }
  return out;
}

/** One GPU instance as a partition: its first compute instance's MIG device names it. */
export function migPartition(bdf: string, gpu: MigGpuQuery, listed: ListedGpu, host: MigListings, gi: GpuInstance): DriverPartition {
  const where = `GPU ${listed.index} (${bdf}) instance ${gi.id}`;
  const profile = host.profiles.find((p) => p.gpu === listed.index && p.id === gi.profileId);
  if (!profile) throw new Error(`${where}: profile ${gi.profileId} is not in nvidia-smi mig -lgip`);
  const ci = host.computes.filter((c) => c.gpu === listed.index && c.gpuInstanceId === gi.id).sort((a, b) => a.id - b.id)[0];
  if (!ci) throw new Error(`${where} has no compute instance, so no MIG device: make one (nvidia-smi mig -i ${listed.index} -gi ${gi.id} -cci) or destroy it (-dgi)`);
  const device = gpu.devices.find((d) => d.gpuInstanceId === gi.id && d.computeInstanceId === ci.id);
  const uuid = device === undefined ? undefined : listed.migDevices.get(device.index)?.uuid;
  if (!uuid) throw new Error(`${where}: nvidia-smi names no MIG device for compute instance ${ci.id}`);
  return {
    profile: profile.name,
    uuid,
    placement: { start: gi.start, size: gi.size },
    toolRef: { gpu: listed.index, gpuInstanceId: gi.id, computeInstanceId: ci.id },
    attachHandle: { type: "MIG", info: { uuid, gpu_bdf: bdf, gpu_instance_id: gi.id, compute_instance_id: ci.id } },
  };
}

/** The GPU's MIG partitioning, or null when it is not in MIG mode. */
export function migPartitioning(bdf: string, host: MigHost, log?: DriverLog): DriverPartitioning | null {
  const gpu = host.query.get(bdf);
  if (!gpu?.migEnabled) return null;
  const listed = gpuIndexOf(bdf, gpu, host.gpus);
  const profiles = profilesOf(listed.index, host, log);
  if (profiles.length === 0) throw new Error(`GPU ${listed.index} (${bdf}) is in MIG mode but nvidia-smi mig -lgip lists no profile for it`);
  const slots = Math.max(...profiles.flatMap((p) => p.placements.map((s) => s.start + s.size)));
  return {
    driverName: MIG_DRIVER_NAME,
    counters: [{ name: "compute", total: Math.max(...profiles.map((p) => p.consumes[0]!.amount)) }],
    slots,
    oneProfileAtATime: false,
    profiles,
    partitions: host.instances.filter((gi) => gi.gpu === listed.index).flatMap((gi) => namedPartition(bdf, gpu, listed, host, gi, log)),
  };
}

/**
 * A GPU instance that cannot be named (no compute instance: one left half-made by hand) is left
 * out with a warning rather than hiding the whole GPU; its slots are still taken, and nvidia-smi
 * refuses a partition made over them.
 */
function namedPartition(bdf: string, gpu: MigGpuQuery, listed: ListedGpu, host: MigListings, gi: GpuInstance, log?: DriverLog): DriverPartition[] {
  try {
    return [migPartition(bdf, gpu, listed, host, gi)];
  } catch (err) {
    log?.warn({ address: bdf, gpuInstanceId: gi.id, err: (err as Error).message }, "MIG GPU instance left out of the report");
    return [];
  }
}

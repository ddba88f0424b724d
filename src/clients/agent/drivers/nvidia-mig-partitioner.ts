/**
 * Making and removing MIG partitions with nvidia-smi, on the GPU at the target's control path
 * (its index is looked up again each time: indexes follow the PCI order of the GPUs nvidia-smi sees).
 * - create: `nvidia-smi mig -i <index> -cgi <profile id>[:<start>] -C` makes the GPU instance and its
 *   default compute instance; the listings are then read again and the new instance answered as
 *   discovery lists it (with its MIG device UUID). When the command fails after the GPU instance was
 *   made (its compute instance could not be), that instance is destroyed again, so no half-made
 *   partition is left behind.
 * - destroy: `nvidia-smi mig -i <index> -gi <id> -dci` (when it has compute instances), then
 *   `-gi <id> -dgi`. A GPU instance that is gone, or whose id now names another MIG device (ids are
 *   reused), or a GPU no longer in MIG mode, means the partition is already destroyed: nothing is run.
 * nvidia-smi's refusals ("Insufficient Resources", "In use by another client") are the errors surfaced.
 */
import type { PciAddress } from "../../../domain/shared/types.js";
import type { DriverEnv, Partitioner } from "./driver.js";
import { bdfOf } from "./mdev-types.js";
import { MIG_DRIVER_NAME, gpuIndexOf, migPartition, readMigListings, readMigQuery, runNvidiaSmi, type MigListings } from "./nvidia-mig.js";
import { parseCreatedGpuInstance, type ListedGpu, type MigGpuQuery } from "./nvidia-mig-parse.js";

/** Making or destroying an instance takes seconds; two minutes before it is called hung. */
export const MIG_CHANGE_TIMEOUT_MS = 2 * 60_000;

interface MigGpu {
  bdf: string;
  gpu: MigGpuQuery;
  listed: ListedGpu;
  host: MigListings;
}

/** The GPU at the control path as `nvidia-smi -q -x` shows it. */
async function queryGpu(env: DriverEnv, controlPath: PciAddress): Promise<{ bdf: string; gpu: MigGpuQuery }> {
  const bdf = bdfOf(controlPath);
  const query = await readMigQuery(env);
  if (!query) throw new Error(`cannot read the MIG state of ${bdf}: this agent reads no nvidia-smi -q -x, or the host has no nvidia-smi`);
  const gpu = query.get(bdf);
  if (!gpu) throw new Error(`nvidia-smi does not see GPU ${bdf}`);
  return { bdf, gpu };
}

/** The GPU at the control path, in MIG mode, with the host's listings. */
async function readGpu(env: DriverEnv, controlPath: PciAddress): Promise<MigGpu> {
  const { bdf, gpu } = await queryGpu(env, controlPath);
  if (!gpu.migEnabled) throw new Error(`GPU ${bdf} is not in MIG mode (nvidia-smi -i ${bdf} -mig 1 enables it)`);
  const host = await readMigListings(env, new Map([[bdf, gpu]]));
  return { bdf, gpu, listed: gpuIndexOf(bdf, gpu, host.gpus), host };
}

const binOf = (env: DriverEnv) => env.config.nvidia?.nvidiaSmi ?? "nvidia-smi";

/**
 * Runs `-cgi ... -C`; when it fails, a GPU instance it made without its compute instance (one that
 * was not there before and has none now) is destroyed again before the failure is answered.
 */
async function createInstance(env: DriverEnv, before: MigGpu, args: string[]): Promise<string> {
  try {
    return await runNvidiaSmi(env, args, MIG_CHANGE_TIMEOUT_MS);
  } catch (err) {
    await destroyHalfMade(env, before).catch(() => undefined);
    throw err;
  }
}

async function destroyHalfMade(env: DriverEnv, before: MigGpu): Promise<void> {
  const index = before.listed.index;
  const known = new Set(before.host.instances.filter((g) => g.gpu === index).map((g) => g.id));
  const now = await readMigListings(env, new Map([[before.bdf, before.gpu]]));
  for (const gi of now.instances.filter((g) => g.gpu === index && !known.has(g.id))) {
    if (now.computes.some((c) => c.gpu === index && c.gpuInstanceId === gi.id)) continue;
    await runNvidiaSmi(env, ["mig", "-i", String(index), "-gi", String(gi.id), "-dgi"], MIG_CHANGE_TIMEOUT_MS);
  }
}

const create: Partitioner["create"] = async (env, target) => {
  const before = await readGpu(env, target.controlPath);
  const index = before.listed.index;
  const { toolId } = target.profile;
  if (!before.host.profiles.some((p) => p.gpu === index && String(p.id) === toolId)) {
    throw new Error(`GPU ${before.bdf} has no MIG GPU-instance profile ${JSON.stringify(toolId)} (nvidia-smi mig -i ${index} -lgip lists them)`);
  }
  const args = ["mig", "-i", String(index), "-cgi", target.placement ? `${toolId}:${target.placement.start}` : toolId, "-C"];
  const command = [binOf(env), ...args];
  const answer = await createInstance(env, before, args);
  const made = parseCreatedGpuInstance(answer);
  if (made === null) throw new Error(`${command.join(" ")} did not say which GPU instance it made: ${answer.trim() || "(no output)"}`);
  const after = await readGpu(env, target.controlPath);
  const gi = after.host.instances.find((g) => g.gpu === after.listed.index && g.id === made);
  if (!gi) throw new Error(`${command.join(" ")} made GPU instance ${made}, but nvidia-smi mig -lgi does not list it`);
  return { command, partition: migPartition(after.bdf, after.gpu, after.listed, after.host, gi) };
};

/** The MIG device UUID the GPU instance has now, or null when it has none (or cannot be named). */
function uuidNow(now: MigGpu, gpuInstanceId: number): string | null {
  const gi = now.host.instances.find((g) => g.gpu === now.listed.index && g.id === gpuInstanceId);
  if (!gi) return null;
  try {
    return migPartition(now.bdf, now.gpu, now.listed, now.host, gi).uuid;
  } catch {
    return null;
  }
}

const destroy: Partitioner["destroy"] = async (env, target) => {
  const gpuInstanceId = Number(target.toolRef.gpuInstanceId);
  if (!Number.isInteger(gpuInstanceId) || gpuInstanceId < 0) throw new Error(`not a MIG partition: toolRef ${JSON.stringify(target.toolRef)} has no gpuInstanceId`);
  // MIG mode can only be left once every instance is gone.
  if (!(await queryGpu(env, target.controlPath)).gpu.migEnabled) return { command: [] };
  const now = await readGpu(env, target.controlPath);
  const index = String(now.listed.index);
  const listed = now.host.instances.some((g) => g.gpu === now.listed.index && g.id === gpuInstanceId);
  // Gone, or the id was reused for another MIG device: nothing of this partition is left to remove.
  if (!listed || (uuidNow(now, gpuInstanceId) ?? target.uuid) !== target.uuid) return { command: [] };
  const gi = ["mig", "-i", index, "-gi", String(gpuInstanceId)];
  const command: string[] = [];
  if (now.host.computes.some((c) => c.gpu === now.listed.index && c.gpuInstanceId === gpuInstanceId)) {
    await runNvidiaSmi(env, [...gi, "-dci"], MIG_CHANGE_TIMEOUT_MS);
    command.push(binOf(env), ...gi, "-dci", "&&");
  }
  await runNvidiaSmi(env, [...gi, "-dgi"], MIG_CHANGE_TIMEOUT_MS);
  command.push(binOf(env), ...gi, "-dgi");
  return { command };
};

/** Makes and removes the MIG partitions discovery reports (driver name NVIDIA_MIG). */
export const migPartitioner: Partitioner = { driverNames: [MIG_DRIVER_NAME], create, destroy };

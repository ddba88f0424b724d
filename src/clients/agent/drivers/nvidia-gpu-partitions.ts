/**
 * NVIDIA GPUs reported as partitioned devices (partitioning-report.ts): a GPU in MIG mode
 * (nvidia-mig.ts), and, with `onDemandMdevs`, a GPU offering mdev (vGPU) types (mdev-types.ts). Such
 * a GPU has no deployable of its own: the service derives one per profile from its partitioning.
 */
import type { DriverPartitioning } from "../../../domain/inventory/partitioning-report.js";
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { DriverEnv, NvidiaGpuConfig } from "./driver.js";
import type { LspciDevice } from "./lspci.js";
import { lspciDevice } from "./lspci-device.js";
import { readMdevPartitioning } from "./mdev-types.js";
import { migPartitioning, readMigListings, readMigQuery, type MigHost } from "./nvidia-mig.js";
import type { MigGpuQuery } from "./nvidia-mig-parse.js";
import { VGPU_DRIVER_NAME } from "./nvidia-partitioner.js";

/** Each GPU's MIG mode, and the MIG listings or why they could not be read. */
export interface MigRead {
  query: Map<string, MigGpuQuery>;
  host: MigHost | Error;
}

/**
 * Once a pass: null when no GPU is in MIG mode (or MIG state is not read). A failed `-q -x` fails
 * the pass (which GPUs are whole is then unknown); failed listings fail only the GPUs in MIG mode.
 */
export async function readMig(env: DriverEnv): Promise<MigRead | null> {
  const query = await readMigQuery(env);
  if (!query || ![...query.values()].some((g) => g.migEnabled)) return null;
  try {
    return { query, host: { query, ...(await readMigListings(env, query)) } };
  } catch (err) {
    return { query, host: err instanceof Error ? err : new Error(String(err)) };
  }
}

/** The GPU's MIG partitioning, or null when it is not in MIG mode; throws when its MIG state cannot be read. */
export function gpuMigPartitioning(env: DriverEnv, bdf: string, mig: MigRead | null): DriverPartitioning | null {
  if (!mig?.query.get(bdf)?.migEnabled) return null;
  if (mig.host instanceof Error) throw new Error(`GPU is in MIG mode, but its MIG state cannot be read: ${mig.host.message}`);
  return migPartitioning(bdf, mig.host, env.log);
}

/** Whether a vGPU type is offered on the GPU: every type, or the enabled ones meant for it. */
function offered(type: string, bdf: string, config: NvidiaGpuConfig): boolean {
  const enabled = config.enabledVgpuTypes ?? [];
  if (enabled.length === 0) return true;
  const addresses = config.vgpuDeviceAddresses?.[type]?.map((a) => a.toLowerCase());
  return enabled.includes(type) && (!addresses || addresses.includes(bdf));
}

/**
 * The GPU's mdev types as partitioning, when `onDemandMdevs` is set and it offers some; a type that
 * has mdevs stays listed even when not offered, since they exist (one type at a time on NVIDIA vGPU).
 */
export async function gpuMdevPartitioning(env: DriverEnv, bdf: string): Promise<DriverPartitioning | null> {
  const config = env.config.nvidia ?? {};
  if (!config.onDemandMdevs) return null;
  const all = await readMdevPartitioning(env, bdf, { resourceClass: "VGPU", oneProfileAtATime: true });
  if (!all) return null;
  const made = new Set(all.partitions.map((p) => p.profile));
  const profiles = all.profiles.filter((p) => offered(p.name, bdf, config) || made.has(p.name)).map((p) => ({ ...p, resourceClass: vgpuResourceClass(p.name) }));
  return profiles.length === 0 ? null : { ...all, driverName: VGPU_DRIVER_NAME, profiles };
}

/**
 * Each type its own resource class (a device's profiles are distinct providers, told apart by
 * class): "nvidia-223" -> CUSTOM_VGPU_NVIDIA_223.
 */
export function vgpuResourceClass(type: string): string {
  return `CUSTOM_VGPU_${type.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_|_$/g, "")}`;
}

/** The GPU as a partitioned device: its board info and control path, no deployable. */
export function partitionedGpu(env: DriverEnv, gpu: LspciDevice, partitioning: DriverPartitioning): DriverDevice {
  const device = lspciDevice(env.hostname, gpu, {
    type: "GPU",
    model: gpu.description,
    vendorBoardInfo: { vendor_info: "gpu_vb_info" },
    deployable: { numAccelerators: 0, driverName: partitioning.driverName ?? null, attributes: [], attachHandles: [] },
  });
  return { ...device, partitioning, deployables: [] };
}

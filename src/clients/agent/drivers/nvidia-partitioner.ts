/**
 * The NVIDIA driver's partitioner: MIG partitions (driver name NVIDIA_MIG, nvidia-mig-partitioner.ts)
 * and mdevs made on demand (NVIDIA_VGPU, mdev-types.ts). A request says which by what discovery
 * reported: a MIG profile is named by its numeric GPU-instance profile id and a MIG partition's
 * toolRef holds its gpuInstanceId; an mdev type is named by its directory ("nvidia-223") and an
 * mdev's toolRef holds its mdevType.
 */
import type { Partitioner } from "./driver.js";
import { mdevPartitioner } from "./mdev-types.js";
import { MIG_DRIVER_NAME } from "./nvidia-mig.js";
import { migPartitioner } from "./nvidia-mig-partitioner.js";

/** The driver name of vGPU types offered as partitioning (DriverPartitioning.driverName). */
export const VGPU_DRIVER_NAME = "NVIDIA_VGPU";

const mdevs = mdevPartitioner([VGPU_DRIVER_NAME]);

export const nvidiaPartitioner: Partitioner = {
  driverNames: [MIG_DRIVER_NAME, VGPU_DRIVER_NAME],
  create: (env, target) => (/^\d+$/.test(target.profile.toolId) ? migPartitioner : mdevs).create(env, target),
  destroy: (env, target) => ("gpuInstanceId" in target.toolRef ? migPartitioner : mdevs).destroy(env, target),
};

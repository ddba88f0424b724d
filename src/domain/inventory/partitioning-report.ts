/**
 * What a driver reports about a device that is cut into pieces on demand (NVIDIA MIG, mdev/vGPU
 * types, SR-IOV functions sharing a port's bandwidth). It rides on DriverDevice.partitioning and
 * DriverDevice.capacities (report.ts). The model it feeds (partitioning.ts) never grants past a
 * counter, a slot, a capacity or an exclusion.
 *
 * MIG on an H100 80GB, for example: counters [{name: "compute", total: 7}], slots 8 (memory
 * slices), profiles 1g.10gb (consumes compute 1, placements {0..6}:1), 3g.40gb (compute 3,
 * placements {0,4}:4), 7g.80gb (compute 7, placement {0}:8), ... as `nvidia-smi mig -lgip` and
 * `-lgipp` list them; partitions are the GPU instances `-lgi` lists, with their MIG device UUIDs.
 */
import type { DriverAttachHandle } from "./handle-report.js";

/** A span of slots a partition occupies: [start, start + size). */
export interface SlotPlacement {
  start: number;
  size: number;
}

export interface DriverPartitionProfile {
  /** The profile's name as the tool shows it, without the vendor's prefix: "1g.10gb", "nvidia-223". */
  name: string;
  /** What the tool calls it when asked to create one: MIG GPU-instance profile id "19", the mdev type directory "nvidia-223". */
  toolId: string;
  /** The Placement resource class of one partition of this profile, e.g. "CUSTOM_MIG_1G_10GB", "VGPU". */
  resourceClass: string;
  /** How much of each counter (by name) one partition of this profile takes. */
  consumes: Array<{ counter: string; amount: number }>;
  /** Where a partition of this profile may start, and how many slots it spans; empty when the device has no slots. */
  placements: SlotPlacement[];
  /** At most this many of this profile at once (the tool's own limit), or null when only counters and slots limit it. */
  maxInstances: number | null;
}

/** A partition that exists now on the device, as the tool lists it. */
export interface DriverPartition {
  /** Its profile's name (DriverPartitionProfile.name). */
  profile: string;
  /** Its identity: the MIG device UUID ("MIG-..."), the mdev UUID. */
  uuid: string;
  /** The slots it occupies; null on a device without slots. */
  placement: SlotPlacement | null;
  /** What the tool needs to destroy it (MIG: {gpuInstanceId, computeInstanceId}); free-form. */
  toolRef: Record<string, string | number>;
  /** How a guest attaches it (MIG: {type: "MIG", info: {uuid, ...}}; mdev: type "MDEV"). */
  attachHandle: DriverAttachHandle;
}

export interface DriverPartitioning {
  /**
   * The driver that makes and destroys the partitions (its Partitioner's driverNames): the agent
   * routes the service's requests by it. The service derives one deployable per profile from the
   * partitioning, with this driver name; null for a device whose partitions are made by hand.
   */
  driverName?: string | null;
  /** Shared amounts partitions draw from (MIG: compute slices). */
  counters: Array<{ name: string; total: number }>;
  /** Positions partitions occupy, 0..slots-1 (MIG: the memory slices); 0 when placements do not apply. */
  slots: number;
  /** Only one profile may exist at a time on the device (NVIDIA time-sliced vGPU: one type per GPU). */
  oneProfileAtATime: boolean;
  profiles: DriverPartitionProfile[];
  partitions: DriverPartition[];
}

/** An amount several ARQs draw from (a NIC port's bandwidth shared by its VFs; device memory). */
export interface DriverCapacity {
  /** e.g. "bandwidth". */
  name: string;
  /** The Placement resource class that carries it, e.g. "CUSTOM_NET_BW_MBPS". */
  resourceClass: string;
  total: number;
  /** e.g. "Mbit/s", "MiB". */
  unit: string;
}

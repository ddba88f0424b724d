/**
 * The agent's driver port: a driver turns what the host shows (lspci output, sysfs) into the
 * driver objects of cyborg-reference 5.1. Drivers never see the event store or the API.
 */
import type { DeviceType, PciAddress } from "../../../domain/shared/types.js";
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { DeviceHealth } from "../../../domain/inventory/health.js";
import type { DriverPartition, SlotPlacement } from "../../../domain/inventory/partitioning-report.js";
import type { HealthSources } from "./health/sources.js";

export const DEFAULT_SYSFS_ROOT = "/sys";

/** Structured warnings; a pino Logger fits. */
export interface DriverLog {
  warn(fields: Record<string, unknown>, msg: string): void;
}

export interface NvidiaGpuConfig {
  /** Cyborg `[gpu_devices] filter_sriov_vfs`: leave SR-IOV VFs out of the report. Default false. */
  skipVirtualFunctions?: boolean;
  /** Cyborg `[gpu_devices] enabled_vgpu_types`, e.g. ["nvidia-223"]; a GPU offers at most one. */
  enabledVgpuTypes?: string[];
  /**
   * Cyborg `[vgpu_<type>] device_addresses`: the GPUs (BDFs) a type is for. A type without an entry
   * applies to every GPU whose sysfs offers it.
   */
  vgpuDeviceAddresses?: Record<string, string[]>;
  /** The nvidia-smi binary a clean resets the GPU with and MIG is read and made with (--nvidia-smi); default "nvidia-smi". */
  nvidiaSmi?: string;
  /**
   * Report a GPU's mdev (vGPU) types as partitioning, made on demand, instead of a fixed deployable
   * with one handle per instance (--vgpu-on-demand). The types offered are `enabledVgpuTypes`
   * (with `vgpuDeviceAddresses`) when given, else all the GPU offers. Default false.
   */
  onDemandMdevs?: boolean;
}

export interface PciWhitelistEntry {
  /** 4 hex digits, e.g. "10de" (a leading 0x is accepted). */
  vendorId?: string;
  productId?: string;
  /** Nova glob style: "0000:af:00.0", "0000:af:*.*", "*:af:00.*", ":00." (missing fields are *). */
  address?: string;
  /** Overrides the device type otherwise derived from the PCI class (see pci.ts). */
  deviceType?: DeviceType;
}

export interface PciDriverConfig {
  /** Cyborg `[pci] passthrough_whitelist`; empty means no device is reported. */
  whitelist: PciWhitelistEntry[];
}

export interface IntelFpgaConfig {
  /** "nested" (default): device deployable + region child (agent-driver spec); "flat": Cyborg's single deployable. */
  layout?: "nested" | "flat";
  /** The blank or golden bitstream a clean programs (--intel-fpga-clean-bitstream); without it a clean is refused. */
  cleanBitstream?: string;
}

/** The fake FPGA's behaviour (agent options --fake-*); without it, Cyborg's fake device exactly. */
export interface FakeFpgaConfig {
  /** Adds the region trait CUSTOM_FPGA_FAKE_REGION_<TYPE>, so bitstreams can be looked up by function. */
  regionType?: string;
  /** How long programming takes (a slow device). */
  programDelayMs?: number;
  /** Programming fails with this message. */
  programFailure?: string;
  /** How long a clean takes. */
  cleanDelayMs?: number;
  /** A clean fails with this message. */
  cleanFailure?: string;
  /** Where the device keeps what it was programmed with across agent restarts (JSON); default: this process's memory. */
  stateFile?: string;
  /** The health the fake device reports (default OK): how a test or a demo injects a failing device. */
  health?: DeviceHealth;
}

/** The fake partitionable GPUs (driver fake-mig; agent options --fake-mig-*). */
export interface FakeMigConfig {
  /** How many H100-like GPUs it reports (default 1). */
  gpus?: number;
  /** How long making a partition takes. */
  createDelayMs?: number;
  /** Making a partition fails with this message. */
  createFailure?: string;
}

export interface DriverConfig {
  nvidia?: NvidiaGpuConfig;
  pci?: PciDriverConfig;
  intelFpga?: IntelFpgaConfig;
  fake?: FakeFpgaConfig;
  fakeMig?: FakeMigConfig;
}

export interface TopologySources {
  /** `nvidia-smi topo -m`: the GPUs' link matrix. */
  nvidiaSmiTopo?: () => Promise<string>;
}

/** Where MIG state is read (nvidia-mig.ts); without it no GPU is taken to be in MIG mode. */
export interface MigSources {
  /** `nvidia-smi -q -x`: each GPU's MIG mode and MIG devices. */
  nvidiaSmiQuery?: () => Promise<string>;
}

export interface DriverEnv {
  hostname: string;
  /** Default "/sys"; tests point it at a fixture tree. */
  sysfsRoot: string;
  /** Runs `lspci -nnn -D` (or returns canned output). */
  lspci: () => Promise<string>;
  /** Runs `lspci -k -s <bdf>`. */
  lspciK?: (bdf: string) => Promise<string>;
  config: DriverConfig;
  /** Where a driver reports the lines and devices it skipped. */
  log?: DriverLog;
  /** Runs a program command (argv, no shell); default host-commands.ts runCommand. Tests record it instead. */
  run?: (argv: readonly string[], opts: { timeoutMs: number }) => Promise<string>;
  /** Where topology is read besides sysfs (topology.ts, nvidia-topo.ts); tests hand it fixtures. */
  topology?: TopologySources;
  /** Where device health is read besides sysfs (health/index.ts); tests hand it fixtures. */
  health?: HealthSources;
  /** Where MIG mode is read (nvidia-mig.ts); the MIG listings and changes run through `run`. */
  mig?: MigSources;
}

/** What a driver programs: a region (deployable) of the device at the control path, with a verified file. */
export interface ProgramTarget {
  /** The device's control path: {domain, bus, device, function}. */
  controlPath: PciAddress & Record<string, unknown>;
  deployableName: string;
  /** The downloaded bitstream, already checked against its checksum. */
  file: string;
  bitstream: { id: string; name: string; functionId: string | null };
}

export interface Programmer {
  /** The deployable driver names it programs (as its discovery reports them). */
  driverNames: readonly string[];
  /** The command line for a target (drivers' command lines are checked against fixtures). */
  command(target: ProgramTarget): string[];
  /** Programs the target; throws with the tool's message when it fails. */
  program(env: DriverEnv, target: ProgramTarget): Promise<{ command: string[] }>;
}

/** What a driver cleans: a whole device, addressed by its control path. */
export interface CleanTarget {
  /** The device's control path info: {domain, bus, device, function} for PCI. */
  controlPath: PciAddress & Record<string, unknown>;
  deviceType: string;
  /** The driver names of the device's deployables. */
  driverNames: readonly string[];
}

export interface Cleaner {
  /** The deployable driver names whose devices it cleans (as its discovery reports them). */
  driverNames: readonly string[];
  /** The device types it cleans, where a driver name is shared (Intel's FPGA and QAT both say "intel"); any when absent. */
  deviceTypes?: readonly string[];
  /** The command line for a target (checked against fixtures). */
  command(target: CleanTarget): string[];
  /**
   * Cleans the device; throws with the tool's message when it fails. The digest identifies what
   * was done (a sha256 over the command and what the tool answered, or the golden image's checksum).
   */
  clean(env: DriverEnv, target: CleanTarget): Promise<{ command: string[]; digest: string }>;
}

/** A partition the service asks the agent to make: a profile of the device, at a placement. */
export interface CreatePartitionTarget {
  controlPath: PciAddress & Record<string, unknown>;
  /** The profile's name and what the tool calls it (DriverPartitionProfile.name, .toolId). */
  profile: { name: string; toolId: string };
  /** Where it starts and how many slots it spans; null on a device without slots. */
  placement: SlotPlacement | null;
}

/** A partition the service asks the agent to remove (as discovery listed it). */
export interface DestroyPartitionTarget {
  controlPath: PciAddress & Record<string, unknown>;
  uuid: string;
  toolRef: Record<string, string | number>;
}

export interface Partitioner {
  /** The deployable driver names whose devices it partitions. */
  driverNames: readonly string[];
  /** Makes the partition; answers it as discovery would list it (with its attach handle). */
  create(env: DriverEnv, target: CreatePartitionTarget): Promise<{ command: string[]; partition: DriverPartition }>;
  /** Removes it; a partition that is already gone is not an error. */
  destroy(env: DriverEnv, target: DestroyPartitionTarget): Promise<{ command: string[] }>;
}

export interface Driver {
  name: string;
  discover(env: DriverEnv): Promise<DriverDevice[]>;
  /** FPGA drivers: how to program a region. */
  programmer?: Programmer;
  /** Drivers whose devices can be cleaned before their next tenant. */
  cleaner?: Cleaner;
  /** Drivers whose devices are cut into partitions on demand. */
  partitioner?: Partitioner;
}

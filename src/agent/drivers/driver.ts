/**
 * The agent's driver port: a driver turns what the host shows (lspci output, sysfs) into the
 * driver objects of cyborg-reference 5.1. Drivers never see the event store or the API.
 */
import type { DeviceType } from "../../domain/shared/types.js";
import type { DriverDevice } from "../../domain/inventory/report.js";

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
}

export interface DriverConfig {
  nvidia?: NvidiaGpuConfig;
  pci?: PciDriverConfig;
  intelFpga?: IntelFpgaConfig;
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
}

export interface Driver {
  name: string;
  discover(env: DriverEnv): Promise<DriverDevice[]>;
}

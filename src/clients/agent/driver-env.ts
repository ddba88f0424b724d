import type { DriverConfig, DriverEnv } from "./drivers/driver.js";
import { readFileSync } from "node:fs";
import { fpgainfoErrorsRunner, kernelLogRunner, lspciRunner, lspciKRunner, nvidiaSmiRunner, nvidiaSmiTopoRunner } from "./drivers/host-commands.js";
import type { DeviceHealth } from "../../domain/inventory/health.js";
import { validateHealth } from "../../domain/inventory/health.js";

export interface DriverCliOptions {
  hostname: string;
  drivers: string;
  sysfsRoot: string;
  lspci: string;
  pciWhitelist: string;
  nvidiaSkipVfs: boolean;
  vgpuTypes: string;
  /** Offer vGPU (mdev) types as partitions made on demand (NvidiaGpuConfig.onDemandMdevs). */
  vgpuOnDemand?: boolean;
  fakeRegionType?: string;
  fakeProgramDelay?: string;
  fakeProgramFail?: string;
  fakeState?: string;
  fakeCleanDelay?: string;
  fakeCleanFail?: string;
  fakeMigGpus?: string;
  fakeMigCreateDelay?: string;
  fakeMigCreateFail?: string;
  /** The blank or golden image an Intel FPGA is cleaned with. */
  intelFpgaCleanBitstream?: string;
  /** A JSON file of {status, reasons}: the fake device's health, read again every pass. */
  fakeHealthFile?: string;
  /** The nvidia-smi binary (default "nvidia-smi"). */
  nvidiaSmi?: string;
  /** The command printing the kernel log (default "dmesg"). */
  kernelLog?: string;
}

/** Driver environment from the CLI options: where sysfs is, how to run lspci, driver settings. */
export function driverEnv(o: DriverCliOptions): DriverEnv {
  let whitelist: unknown;
  try {
    whitelist = JSON.parse(o.pciWhitelist);
  } catch {
    throw new Error(`--pci-whitelist is not JSON: ${o.pciWhitelist}`);
  }
  if (!Array.isArray(whitelist)) throw new Error("--pci-whitelist must be a JSON array of {vendorId, productId, address}");
  return {
    hostname: o.hostname,
    sysfsRoot: o.sysfsRoot,
    lspci: lspciRunner(o.lspci),
    lspciK: lspciKRunner(),
    health: { nvidiaSmi: nvidiaSmiRunner(o.nvidiaSmi), kernelLog: kernelLogRunner(o.kernelLog), fpgainfoErrors: fpgainfoErrorsRunner() },
    topology: { nvidiaSmiTopo: nvidiaSmiTopoRunner(o.nvidiaSmi) },
    mig: { nvidiaSmiQuery: nvidiaSmiRunner(o.nvidiaSmi) },
    config: {
      nvidia: { skipVirtualFunctions: o.nvidiaSkipVfs, enabledVgpuTypes: o.vgpuTypes.split(",").filter(Boolean), ...(o.vgpuOnDemand ? { onDemandMdevs: true } : {}), ...(o.nvidiaSmi ? { nvidiaSmi: o.nvidiaSmi } : {}) },
      ...(o.intelFpgaCleanBitstream ? { intelFpga: { cleanBitstream: o.intelFpgaCleanBitstream } } : {}),
      pci: { whitelist },
      ...fakeConfig(o),
      ...fakeMigConfig(o),
    },
  };
}

/** The fake FPGA's --fake-* options; none given: Cyborg's fake device as it is. */
function fakeConfig(o: DriverCliOptions): Pick<DriverConfig, "fake"> {
  const given = [o.fakeRegionType, o.fakeProgramDelay, o.fakeProgramFail, o.fakeState, o.fakeHealthFile, o.fakeCleanDelay, o.fakeCleanFail];
  if (given.every((v) => v === undefined)) return {};
  const fake = {
    regionType: o.fakeRegionType,
    programDelayMs: milliseconds("--fake-program-delay", o.fakeProgramDelay),
    programFailure: o.fakeProgramFail,
    cleanDelayMs: milliseconds("--fake-clean-delay", o.fakeCleanDelay),
    cleanFailure: o.fakeCleanFail,
    stateFile: o.fakeState,
  };
  if (o.fakeHealthFile === undefined) return { fake };
  const file = o.fakeHealthFile;
  return { fake: Object.defineProperty(fake, "health", { get: () => readFakeHealth(file), enumerable: true }) };
}

/** The fake partitionable GPUs' --fake-mig-* options. */
function fakeMigConfig(o: DriverCliOptions): Pick<DriverConfig, "fakeMig"> {
  if (o.fakeMigGpus === undefined && o.fakeMigCreateDelay === undefined && o.fakeMigCreateFail === undefined) return {};
  const gpus = o.fakeMigGpus === undefined ? 1 : Number(o.fakeMigGpus);
  if (!Number.isInteger(gpus) || gpus < 1 || gpus > 190) throw new Error(`--fake-mig-gpus must be a whole number from 1 to 190, got ${o.fakeMigGpus}`);
  return { fakeMig: { gpus, createDelayMs: milliseconds("--fake-mig-create-delay", o.fakeMigCreateDelay), createFailure: o.fakeMigCreateFail } };
}

function milliseconds(option: string, value: string | undefined): number {
  const ms = value === undefined ? 0 : Number(value);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`${option} must be a number of milliseconds >= 0, got ${value}`);
  return ms;
}

/** The fake device's injected health; a file that cannot be read or is not a health says UNKNOWN with the reason. */
export function readFakeHealth(file: string): DeviceHealth {
  try {
    return validateHealth(JSON.parse(readFileSync(file, "utf8")), "health") ?? { status: "OK", reasons: [] };
  } catch (err) {
    return { status: "UNKNOWN", reasons: [{ code: "HEALTH_UNREADABLE", message: `--fake-health-file ${file}: ${(err as Error).message}`.slice(0, 255) }] };
  }
}

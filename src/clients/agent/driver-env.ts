import type { DriverConfig, DriverEnv } from "./drivers/driver.js";
import { lspciRunner, lspciKRunner } from "./drivers/host-commands.js";

export interface DriverCliOptions {
  hostname: string;
  drivers: string;
  sysfsRoot: string;
  lspci: string;
  pciWhitelist: string;
  nvidiaSkipVfs: boolean;
  vgpuTypes: string;
  fakeRegionType?: string;
  fakeProgramDelay?: string;
  fakeProgramFail?: string;
  fakeState?: string;
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
    config: {
      nvidia: { skipVirtualFunctions: o.nvidiaSkipVfs, enabledVgpuTypes: o.vgpuTypes.split(",").filter(Boolean) },
      pci: { whitelist },
      ...fakeConfig(o),
    },
  };
}

/** The fake FPGA's --fake-* options; none given: Cyborg's fake device as it is. */
function fakeConfig(o: DriverCliOptions): Pick<DriverConfig, "fake"> {
  if (o.fakeRegionType === undefined && o.fakeProgramDelay === undefined && o.fakeProgramFail === undefined && o.fakeState === undefined) return {};
  const delay = o.fakeProgramDelay === undefined ? 0 : Number(o.fakeProgramDelay);
  if (!Number.isFinite(delay) || delay < 0) throw new Error(`--fake-program-delay must be a number of milliseconds >= 0, got ${o.fakeProgramDelay}`);
  return { fake: { regionType: o.fakeRegionType, programDelayMs: delay, programFailure: o.fakeProgramFail, stateFile: o.fakeState } };
}

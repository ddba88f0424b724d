import type { DriverEnv } from "./drivers/driver.js";
import { lspciRunner, lspciKRunner } from "./drivers/host-commands.js";

export interface DriverCliOptions {
  hostname: string;
  drivers: string;
  sysfsRoot: string;
  lspci: string;
  pciWhitelist: string;
  nvidiaSkipVfs: boolean;
  vgpuTypes: string;
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
    },
  };
}

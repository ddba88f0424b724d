/**
 * The driver registry and the agent's discovery pass. One failing driver never hides the others:
 * its failure is returned in `errors` and the rest still report. Drivers skip bad lines and bad
 * devices themselves, with a warning.
 *
 * Callers beware: a report built while a driver failed lacks that driver's devices, and the
 * inventory treats a missing device as removed; check `errors` before reporting.
 * Every PCI device a driver reports gets its topology from sysfs here (topology.ts).
 */
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { Driver, DriverEnv, DriverLog } from "./driver.js";
import { fakeDriver } from "./fake.js";
import { fakeMigDriver } from "./fake-mig.js";
import { intelFpgaDriver } from "./intel-fpga.js";
import { intelQatDriver } from "./intel-qat.js";
import { nvidiaGpuDriver } from "./nvidia-gpu.js";
import { pciDriver } from "./pci.js";
import { withSysfsTopology } from "./topology.js";
import { xilinxFpgaDriver } from "./xilinx-fpga.js";

export type { Driver, DriverConfig, DriverEnv, DriverLog } from "./driver.js";

export const drivers: Record<string, Driver> = {
  fake: fakeDriver,
  "fake-mig": fakeMigDriver,
  "nvidia-gpu": nvidiaGpuDriver,
  "intel-fpga": intelFpgaDriver,
  "xilinx-fpga": xilinxFpgaDriver,
  "intel-qat": intelQatDriver,
  pci: pciDriver,
};

export interface DriverError {
  driver: string;
  message: string;
}

export interface Discovery {
  /** In the order of `names`, then in each driver's order. */
  devices: DriverDevice[];
  errors: DriverError[];
  /** The devices each driver that ran contributed (absent for a driver that failed). */
  byDriver: Record<string, DriverDevice[]>;
}

/** One `lspci` run shared by every driver of a pass. */
function once(run: () => Promise<string>): () => Promise<string> {
  let result: Promise<string> | undefined;
  return () => (result ??= run());
}

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

type DriverRun = { name: string; devices: DriverDevice[] } | { name: string; error: string };

async function runDriver(name: string, env: DriverEnv, log: DriverLog, registry: Record<string, Driver>): Promise<DriverRun> {
  if (!Object.hasOwn(registry, name)) {
    return { name, error: `unknown driver "${name}" (known: ${Object.keys(registry).join(", ")})` };
  }
  const driverLog: DriverLog = { warn: (fields, msg) => log.warn({ driver: name, ...fields }, msg) };
  try {
    const devices = await registry[name]!.discover({ ...env, log: driverLog });
    return { name, devices: await withSysfsTopology(env, devices) };
  } catch (err) {
    return { name, error: errorMessage(err) };
  }
}

const canonical = (info: Record<string, unknown>) => JSON.stringify(info, Object.keys(info).sort());

/** What must be unique in one host's report: control paths, deployable names, attach handles. */
const identities = (d: DriverDevice) => [
  `control path ${canonical(d.controlPath.info)}`,
  ...(d.additionalControlPaths ?? []).map((c) => `control path ${canonical(c.info)}`),
  ...d.deployables.map((dep) => `deployable ${dep.name}`),
  ...d.deployables.flatMap((dep) => dep.attachHandles.map((h) => `attach handle ${canonical(h.info)}`)),
];

/**
 * Runs the named drivers (duplicates ignored) and concatenates their devices. A device whose
 * control path, a deployable name or an attach handle was already reported by an earlier driver
 * (e.g. a GPU that is also on the pci whitelist) is dropped and reported as an error of the later
 * driver: the service refuses a report with such duplicates.
 */
export async function discoverAll(
  names: readonly string[],
  env: DriverEnv,
  log: DriverLog,
  registry: Record<string, Driver> = drivers,
): Promise<Discovery> {
  const shared: DriverEnv = { ...env, lspci: once(env.lspci) };
  const results = await Promise.all([...new Set(names)].map((name) => runDriver(name, shared, log, registry)));

  const discovery: Discovery = { devices: [], errors: [], byDriver: {} };
  const owners = new Map<string, string>();
  for (const result of results) {
    if ("error" in result) {
      discovery.errors.push({ driver: result.name, message: result.error });
      continue;
    }
    for (const device of result.devices) {
      const keys = identities(device);
      const taken = keys.find((k) => owners.has(k));
      if (taken) {
        const message = `device ${JSON.stringify(device.controlPath.info)} ignored: ${taken} already reported by driver ${owners.get(taken)}`;
        log.warn({ driver: result.name }, message);
        discovery.errors.push({ driver: result.name, message });
        continue;
      }
      keys.forEach((k) => owners.set(k, result.name));
      discovery.devices.push(device);
      (discovery.byDriver[result.name] ??= []).push(device);
    }
  }
  return discovery;
}

/** A DriverEnv over test/fixtures/<case>/: canned `lspci.txt`, a `sys/` tree, warnings recorded. */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { DriverEnv, DriverLog } from "../../../src/clients/agent/drivers/driver.js";

export const FIXTURES = fileURLToPath(new URL("../../fixtures/", import.meta.url));

export interface Warning {
  fields: Record<string, unknown>;
  msg: string;
}

export function recordingLog(): DriverLog & { warnings: Warning[] } {
  const warnings: Warning[] = [];
  return { warnings, warn: (fields, msg) => void warnings.push({ fields, msg }) };
}

export function fixtureEnv(fixture: string, overrides: Partial<DriverEnv> = {}): DriverEnv & { warnings: Warning[] } {
  const log = recordingLog();
  return {
    hostname: "compute1",
    sysfsRoot: `${FIXTURES}${fixture}/sys`,
    lspci: () => readFile(`${FIXTURES}${fixture}/lspci.txt`, "utf8"),
    config: {},
    log,
    warnings: log.warnings,
    ...overrides,
  };
}

/** {domain,bus,device,function} of a BDF, for expectations. */
export function pci(bdf: string) {
  const [domain, bus, rest] = bdf.split(":") as [string, string, string];
  const [device, fn] = rest.split(".") as [string, string];
  return { domain, bus, device, function: fn };
}

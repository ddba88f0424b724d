/** Every driver names its deployables as the service takes them from its host (domain/inventory/deployable-names.ts). */
import { describe, expect, it } from "vitest";
import type { DriverConfig } from "../../../src/clients/agent/drivers/driver.js";
import { discoverAll, drivers } from "../../../src/clients/agent/drivers/index.js";
import { decideReport } from "../../../src/domain/inventory/decider.js";
import { initialHostState } from "../../../src/domain/inventory/state.js";
import { partitionDeployableName } from "../../../src/domain/inventory/partition-deployables.js";
import { fixtureEnv, recordingLog } from "./fixture-env.js";

const ALL = Object.keys(drivers);
const CONFIGS: Array<[string, DriverConfig]> = [
  ["defaults", {}],
  ["vGPUs, nested FPGA regions, a PCI whitelist", {
    nvidia: { enabledVgpuTypes: ["nvidia-223", "nvidia-472"], vgpuDeviceAddresses: { "nvidia-223": ["0000:3b:00.0"] } },
    intelFpga: { layout: "nested" },
    pci: { whitelist: [{ vendorId: "15b3" }, { productId: "5005" }] },
  }],
  ["flat FPGAs, VFs skipped", { nvidia: { skipVirtualFunctions: true }, intelFpga: { layout: "flat" } }],
];

describe("the drivers' reports are their host's", () => {
  for (const hostname of ["compute1", "compute-1.example.org"]) {
    for (const fixture of ["mixed-host", "fpga-variants", "no-accelerators"]) {
      for (const [what, config] of CONFIGS) {
        it(`${hostname}, ${fixture}, ${what}: every deployable is accepted`, async () => {
          const { devices } = await discoverAll(ALL, fixtureEnv(fixture, { hostname, config }), recordingLog());
          const names = devices.filter((d) => !d.stub).flatMap((d) => d.deployables.map((dep) => dep.name));
          expect(names.length).toBeGreaterThan(0);
          const { events } = decideReport({ type: "ReportHostInventory", data: { hostname, devices, at: "2026-03-01T10:00:00.000Z" } }, initialHostState());
          const added = events.flatMap((e) => (e.type === "DeployableAdded" ? [e.data.name] : []));
          // A partitioned device's providers are derived from its partitioning, one per profile.
          const derived = devices.flatMap((d) => d.partitioning?.profiles.map((p) => partitionDeployableName(hostname, d as never, p.name)) ?? []);
          expect(added.sort()).toEqual([...names, ...derived].sort());
        });
      }
    }
  }
});


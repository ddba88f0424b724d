/** An H100 80GB as `nvidia-smi mig -lgip` / `-lgipp` list it: 7 compute slices, 8 memory slices (the fake-mig driver's table). */
import { H100_PROFILES } from "../../../src/clients/agent/drivers/fake-mig.js";
import type { DriverPartitioning } from "../../../src/domain/inventory/partitioning-report.js";

export function h100(): DriverPartitioning {
  return { counters: [{ name: "compute", total: 7 }], slots: 8, oneProfileAtATime: false, profiles: H100_PROFILES.map((p) => ({ ...p })), partitions: [] };
}

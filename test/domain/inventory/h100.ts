/** An H100 80GB as `nvidia-smi mig -lgip` / `-lgipp` list it: 7 compute slices, 8 memory slices. */
import type { DriverPartitioning, DriverPartitionProfile } from "../../../src/domain/inventory/partitioning-report.js";

function mig(name: string, toolId: string, compute: number, starts: number[], size: number, max: number): DriverPartitionProfile {
  return {
    name,
    toolId,
    resourceClass: `CUSTOM_MIG_${name.replace(".", "_").toUpperCase()}`,
    consumes: [{ counter: "compute", amount: compute }],
    placements: starts.map((start) => ({ start, size })),
    maxInstances: max,
  };
}

export function h100(): DriverPartitioning {
  return {
    counters: [{ name: "compute", total: 7 }],
    slots: 8,
    oneProfileAtATime: false,
    profiles: [
      mig("1g.10gb", "19", 1, [0, 1, 2, 3, 4, 5, 6], 1, 7),
      mig("1g.20gb", "15", 1, [0, 2, 4, 6], 2, 4),
      mig("2g.20gb", "14", 2, [0, 2, 4], 2, 3),
      mig("3g.40gb", "9", 3, [0, 4], 4, 2),
      mig("4g.40gb", "5", 4, [0], 4, 1),
      mig("7g.80gb", "0", 7, [0], 8, 1),
    ],
    partitions: [],
  };
}

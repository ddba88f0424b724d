/**
 * A partitioned device in the host's tree: one deployable (so one Placement provider) per
 * partition profile, named `<host>_<BDF>_<profile>`, whose resource class is the profile's and
 * whose attach handles are the partitions of that profile that exist. Its numAccelerators is how
 * many of the profile the device holds when empty; Placement's `reserved` says how many fit now
 * (resource-providers.ts). The report's diff derives these deployables, so every driver that
 * reports partitioning gets the same tree, and the partitioning itself is recorded with
 * DevicePartitioningChanged when it differs from what the host stream knows.
 */
import { canonicalJson } from "../shared/json.js";
import { customTrait } from "../shared/traits.js";
import { DomainError } from "../shared/types.js";
import type { InventoryEvent } from "./events.js";
import type { DevicePartitionRecord } from "./host-tree.js";
import { fitsNow, partitioningFromReport } from "./partitioning.js";
import type { DriverPartitioning } from "./partitioning-report.js";
import { MAX_NAME_LENGTH, type ReportedDeployable, type ReportedDevice } from "./report-validation.js";

/** The report with each partitioned device's profile deployables added after its own. */
export function withPartitionDeployables(hostname: string, report: ReportedDevice[]): ReportedDevice[] {
  if (!report.some((d) => d.partitioning)) return report;
  return report.map((d, i) => (d.partitioning ? { ...d, deployables: [...d.deployables, ...profileDeployables(hostname, d, d.partitioning, i)] } : d));
}

export function partitionDeployableName(hostname: string, device: Pick<ReportedDevice, "controlPath">, profile: string): string {
  const a = device.controlPath.info as Record<string, string>;
  return `${hostname}_${a["domain"]}:${a["bus"]}:${a["device"]}.${a["function"]}_${profile}`;
}

function profileDeployables(hostname: string, d: ReportedDevice, p: DriverPartitioning, i: number): ReportedDeployable[] {
  const empty = partitioningFromReport({ ...p, partitions: [] });
  const taken = new Set(d.deployables.map((x) => x.name));
  return p.profiles.map((profile, k) => {
    const name = partitionDeployableName(hostname, d, profile.name);
    const field = `devices[${i}].partitioning.profiles[${k}].name`;
    if (name.length > MAX_NAME_LENGTH) throw new DomainError("BAD_USER_INPUT", `the profile's provider name ${name} passes ${MAX_NAME_LENGTH} characters: use a shorter profile name`, field);
    if (taken.has(name)) throw new DomainError("BAD_USER_INPUT", `the profile's provider name ${name} is already a deployable of the device`, field);
    return {
      index: d.deployables.length + k,
      name,
      numAccelerators: fitsNow(empty, profile.name),
      driverName: p.driverName ?? null,
      parentName: null,
      attributes: [
        { key: "rc", value: profile.resourceClass, parentKey: null },
        { key: "trait0", value: customTrait("PARTITION", profile.name), parentKey: null },
      ],
      handles: p.partitions.filter((x) => x.profile === profile.name).map((x) => ({ type: x.attachHandle.type, info: x.attachHandle.info, infoKey: canonicalJson(x.attachHandle.info) })),
    };
  });
}

/** The events a device's reported partitioning writes: none when it did not change (partitions compared as a set). */
export function partitioningEvents(hostname: string, deviceUuid: string, recorded: DevicePartitionRecord | null, reported: DriverPartitioning | undefined, at: string): InventoryEvent[] {
  const next = reported ?? null;
  if (samePartitioning(recorded?.reported ?? null, next)) return [];
  return [{ type: "DevicePartitioningChanged", data: { hostname, deviceUuid, partitioning: next, at } }];
}

function samePartitioning(a: DriverPartitioning | null, b: DriverPartitioning | null): boolean {
  if (a === null || b === null) return a === b;
  return canonicalJson(canonical(a)) === canonicalJson(canonical(b));
}

function canonical(p: DriverPartitioning): DriverPartitioning {
  return { ...p, driverName: p.driverName ?? null, partitions: [...p.partitions].sort((x, y) => x.uuid.localeCompare(y.uuid)) };
}

/**
 * How many partitions of each profile a partitioned device can hold now: the ones held and being
 * made, plus the free ones and those the counters and slots still allow (partitioning.ts). It is
 * what Placement's inventory of the profile's provider offers (total - reserved:
 * resource-providers.ts), recorded with PartitionInventoryChanged whenever a decision changes it,
 * so the read model and the Placement sync show the rule's answer without deciding it again.
 */
import { fold } from "../shared/decider.js";
import type { InventoryEvent } from "./events.js";
import type { DeviceNode, HostState } from "./host-tree.js";
import { deployableOfProfile, partitioningOf } from "./partition-record.js";
import { allocatedOf, fitsNow } from "./partitioning.js";
import { evolveHost } from "./state.js";

export interface ProfileAvailability {
  deployableUuid: string;
  profile: string;
  available: number;
}

/** The device's profiles' availability now, for the profiles the tree has a deployable for. */
export function availabilityOf(device: DeviceNode): ProfileAvailability[] {
  const model = partitioningOf(device);
  if (!model) return [];
  const out: ProfileAvailability[] = [];
  for (const profile of model.profiles.keys()) {
    const d = deployableOfProfile(device, profile);
    if (d) out.push({ deployableUuid: d.uuid, profile, available: allocatedOf(model, profile) + fitsNow(model, profile) });
  }
  return out;
}

/** `events` with PartitionInventoryChanged added for each partitioned device whose availability they change. */
export function withPartitionInventory(before: HostState, events: InventoryEvent[], hostname: string, at: string): InventoryEvent[] {
  if (events.length === 0) return events;
  const touched = touchedDevices(before, events);
  if (touched.size === 0) return events;
  const after = fold({ evolve: evolveHost }, before, events);
  const extra: InventoryEvent[] = [];
  for (const uuid of touched) {
    const device = after.devices.get(uuid);
    if (!device?.partitioning) continue;
    const now = availabilityOf(device);
    const recorded = device.partitioning.available;
    if (now.length === recorded.size && now.every((a) => recorded.get(a.deployableUuid) === a.available)) continue;
    extra.push({ type: "PartitionInventoryChanged", data: { hostname, deviceUuid: device.uuid, available: now, at } });
  }
  return extra.length === 0 ? events : [...events, ...extra];
}

/** The partitioned devices (or those becoming so) the events name, directly or through a deployable. */
function touchedDevices(before: HostState, events: readonly InventoryEvent[]): Set<string> {
  const out = new Set<string>();
  for (const e of events) {
    const d = e.data as { deviceUuid?: string; deployableUuid?: string };
    const uuid = d.deviceUuid ?? (d.deployableUuid === undefined ? undefined : before.deviceOfDeployable.get(d.deployableUuid));
    if (uuid === undefined) continue;
    if (e.type === "DevicePartitioningChanged" || before.devices.get(uuid)?.partitioning) out.add(uuid);
  }
  return out;
}

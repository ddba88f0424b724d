/**
 * A device's capacities in the host stream: the amounts its driver reports (DriverDevice.capacities,
 * recorded with DeviceCapacitiesChanged only when they change) and what each ARQ draws from them.
 * Who draws what lives once, in the attach handles' allocations (AttachHandleAllocated.draws), so a
 * draw is released with its handle and the host stream's revision serialises draws as it does
 * handles: concurrent binds never take a capacity past its total (capacity.ts).
 */
import { canonicalJson } from "../shared/json.js";
import { capacityFromReport, type CapacityState } from "./capacity.js";
import type { InventoryEvent } from "./events.js";
import type { DeviceNode, HostState } from "./host-tree.js";
import type { DriverCapacity } from "./partitioning-report.js";
import { profileOfDeployable } from "./partition-record.js";

/** DeviceCapacitiesChanged when the reported capacities differ from the recorded ones (in order; none reported is none). */
export function capacitiesEvents(hostname: string, deviceUuid: string, recorded: readonly DriverCapacity[], reported: readonly DriverCapacity[] | undefined, at: string): InventoryEvent[] {
  const next = reported ?? [];
  if (canonicalJson(recorded) === canonicalJson(next)) return [];
  return [{ type: "DeviceCapacitiesChanged", data: { hostname, deviceUuid, capacities: [...next], at } }];
}

/** The device's capacities with what each ARQ holding one of its handles draws from them. */
export function capacityStatesOf(state: Pick<HostState, "allocations">, device: DeviceNode): CapacityState[] {
  if (device.capacities.length === 0) return [];
  const draws = new Map<string, Map<string, number>>();
  for (const a of state.allocations.values()) {
    if (a.deviceUuid !== device.uuid) continue;
    for (const d of a.draws ?? []) {
      const byArq = draws.get(d.resourceClass) ?? new Map<string, number>();
      byArq.set(a.arqUuid, (byArq.get(a.arqUuid) ?? 0) + d.amount);
      draws.set(d.resourceClass, byArq);
    }
  }
  return device.capacities.map((c) => capacityFromReport(c, draws.get(c.resourceClass)));
}

/**
 * The provider that carries the device's capacities in Placement and that binds drawing from them
 * name: the device's first deployable with a resource class, in the order first reported (an
 * SR-IOV NIC's physical function, whose attach handles are its VFs), never a partition profile's.
 * Null when it has none.
 */
export function capacityProviderOf(device: DeviceNode): string | null {
  if (device.capacities.length === 0) return null;
  for (const d of device.deployables.values()) if (d.attributes.has("rc") && !profileOfDeployable(device, d)) return d.uuid;
  return null;
}

/**
 * The Placement resource providers a host's inventory asks for (cyborg-reference 5.4): one child
 * provider of the host's compute-node provider per deployable that has a resource class.
 * The Placement sync makes Placement match this; projections/resource-providers.ts shows the same
 * rule as a read model (test/placement/differential.test.ts checks that both agree).
 *
 * - uuid: the deployable's rpUuid, uuid3(NAMESPACE_DNS, name), as Cyborg; name: the deployable name.
 * - inventory: the `rc` attribute's class, total = numAccelerators, max_unit = total.
 * - a partition profile's provider (partition-deployables.ts): total = how many of the profile the
 *   empty device holds, reserved = total - how many it can hold now (partition-inventory.ts), so
 *   Nova's scheduler never picks a partition that cannot be made.
 * - reserved = total while nothing new may land on it: the device is not offered in its lifecycle
 *   (device-lifecycle.ts: a taint, Cyborg's status MAINTAINING; cleaning; qualifying; failed), or the device or the deployable left the report while allocated
 *   (lost, kept until released: never deleted under a VM).
 * - a device's capacities (capacity-record.ts: a NIC port's bandwidth) are more inventories of the
 *   provider that carries them (its first provider that is not a partition profile's): total as
 *   reported, reserved = total while nothing new may land on the device, as for its own class, so a
 *   request for a VF and bandwidth finds both on one provider, as Neutron's ports ask for them.
 * - traits: the values of the `trait*` attributes (function and region traits change with them
 *   after FPGA reprogramming), plus OWNER_CYBORG, the os-traits mark of a provider Cyborg owns.
 */
import { OWNER_CYBORG } from "../shared/traits.js";
import { deviceLifecycle, isOffered } from "./device-lifecycle.js";
import type { InventoryEvent } from "./events.js";
import type { DeployableNode, DeviceNode, HostState } from "./state.js";
import { capacityProviderOf } from "./capacity-record.js";

export interface DesiredProvider {
  uuid: string;
  name: string;
  /** The compute-node provider's name: the hostname. */
  parentName: string;
  resourceClass: string;
  /** numAccelerators; 0 means a provider with no inventory (Placement needs total >= 1). */
  total: number;
  reserved: number;
  /** The device's capacities this provider carries, each one more inventory beside `resourceClass`; [] for most. */
  capacities: Array<{ resourceClass: string; total: number; reserved: number }>;
  /** Sorted, without duplicates. */
  traits: string[];
  deployableUuid: string;
  deviceUuid: string;
}

/** Events after which a host's desired providers may differ (attach-handle allocation alone never changes them). */
export const PROVIDER_EVENT_TYPES = [
  "DeviceDiscovered",
  "DeviceStatusChanged",
  "DeviceTainted",
  "DeviceUntainted",
  "DeviceLost",
  "DeviceRemoved",
  "DeployableAdded",
  "DeployableChanged",
  "DeployableRemoved",
  "AttributeSet",
  "AttributeRemoved",
  "AttachHandleLost",
  "AttachHandleRemoved",
  "DeviceCleaningRequested",
  "DeviceCleaned",
  "DeviceCleaningFailed",
  "DeviceQualified",
  "DeviceFailed",
  "PartitionInventoryChanged",
  "DeviceCapacitiesChanged",
] as const satisfies ReadonlyArray<InventoryEvent["type"]>;

/** The host's providers, devices and deployables in the order first reported. */
export function desiredProviders(state: HostState): DesiredProvider[] {
  if (state.hostname === null) return [];
  const out: DesiredProvider[] = [];
  for (const device of state.devices.values()) {
    for (const deployable of device.deployables.values()) {
      const p = providerOf(state.hostname, device, deployable);
      if (p) out.push(p);
    }
  }
  return out;
}

function providerOf(hostname: string, device: DeviceNode, d: DeployableNode): DesiredProvider | null {
  const rc = d.attributes.get("rc")?.value;
  if (rc === undefined) return null;
  const traits = providerTraits(d);
  const availability: ProviderAvailability = {
    notOffered: !isOffered(deviceLifecycle(device)),
    deviceLost: device.lostArqs !== null,
    handles: d.handles.size,
    lostHandles: [...d.handles.values()].filter((h) => h.lost).length,
    available: device.partitioning?.available.get(d.uuid) ?? null,
  };
  const carried = capacityProviderOf(device) === d.uuid ? device.capacities : [];
  return {
    uuid: d.rpUuid,
    name: d.name,
    parentName: hostname,
    resourceClass: rc,
    total: d.numAccelerators,
    reserved: reservedOf(d.numAccelerators, availability),
    capacities: carried.map((c) => ({ resourceClass: c.resourceClass, total: c.total, reserved: reservedOf(c.total, { ...availability, available: null }) })),
    traits: [...traits].sort(),
    deployableUuid: d.uuid,
    deviceUuid: device.uuid,
  };
}

/** The provider's traits: the values of the deployable's `trait*` attributes, and OWNER_CYBORG. */
export function providerTraits(d: DeployableNode): Set<string> {
  const traits = new Set<string>([OWNER_CYBORG]);
  for (const [key, a] of d.attributes) if (key.startsWith("trait")) traits.add(a.value);
  return traits;
}

/** What decides whether anything new may land on a provider, as the host stream and the read model both know it. */
export interface ProviderAvailability {
  /** Its device's lifecycle state refuses new binds: tainted (Cyborg's status MAINTAINING), draining, drained, cleaning, qualifying or failed. */
  notOffered: boolean;
  /** Its device left the report while allocated. */
  deviceLost: boolean;
  handles: number;
  lostHandles: number;
  /** A partition profile's provider: how many of the profile the device can hold now (partition-inventory.ts); null for any other provider. */
  available?: number | null;
}

/** The provider's reserved capacity: all of it while nothing new may land on it; on a partition profile's provider, what cannot be made now; none otherwise. */
export function reservedOf(total: number, a: ProviderAvailability): number {
  // A deployable that left the report keeps only its lost (allocated) handles.
  const left = a.handles > 0 && a.lostHandles === a.handles;
  if (a.notOffered || a.deviceLost || left) return total;
  return a.available === undefined || a.available === null ? 0 : Math.max(0, total - a.available);
}

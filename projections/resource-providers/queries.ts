/** The resource-providers read model's query: deployables as Placement sees them. */
import { isOffered, lifecycleOf, type DeviceLifecycleState, type LifecycleInputs } from "../../src/domain/inventory/device-lifecycle.js";
import type { TaintEffect } from "../../src/domain/shared/tolerations.js";
import { reservedOf, type ProviderAvailability } from "../../src/domain/inventory/resource-providers.js";
import type { CapacityDraw } from "../../src/domain/inventory/events.js";
import type { DriverCapacity } from "../../src/domain/inventory/partitioning-report.js";
import type { Pacing } from "../../src/infra/duty-cycle.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { attributesView } from "../shared/deployables.js";
import { hostsChangedSince as changedSince } from "../shared/changed-hosts.js";
import { HostFeed, type HostView } from "../shared/host-feed.js";
import { k, name } from "./projection.js";

export type ResourceProviderView = {
  uuid: string;
  name: string;
  parentProviderName: string;
  resourceClass: string;
  total: number;
  reserved: number;
  used: number;
  traits: string[];
  deployableUuid: string;
  deviceUuid: string;
  /** The device's lifecycle state (device-lifecycle.ts), from its taints, its holders on every deployable and its cleaning. */
  deviceState: DeviceLifecycleState;
  /** The device's capacities, on the provider that carries them (its first that is not a partition profile's): more inventories beside resourceClass. */
  capacities: ProviderCapacityView[];
};

/** One more inventory of a provider: a capacity of its device (a NIC port's bandwidth), and what the binds there draw. */
export type ProviderCapacityView = { resourceClass: string; total: number; reserved: number; used: number };

/**
 * Every accelerator RP (of one host), in the order the deployables were added. A deployable
 * without an `rc` attribute (e.g. an FPGA region above its functions) has no inventory in
 * Placement, so it is no RP. Three round trips. `reserved` is the domain's rule
 * (reservedOf, src/domain/inventory/resource-providers.ts) on what the read model counts.
 */
export async function listResourceProviders(store: ReadStore, hostname?: string | null): Promise<ResourceProviderView[]> {
  const [members] = await store.getMembers([hostname ? k("by-host", hostname) : k("all")]);
  const deps = members!;
  const [rps, attrs, orders, counts, draws] = await Promise.all([
    store.getDocs(deps.map((u) => k("rp", u))),
    store.getDocs(deps.map((u) => k("attrs", u))),
    store.getMembers(deps.map((u) => k("attr-order", u))),
    store.count(deps.flatMap((u) => [k("in-use", u), k("handles", u), k("lost", u)])),
    store.getDocs(deps.map((u) => k("draws", u))),
  ]);
  const deviceUuids = [...new Set(rps.flatMap((rp) => (rp ? [rp.deviceUuid as string] : [])))];
  const devices = await store.getDocs(deviceUuids.map((u) => k("device", u)));
  const deviceOf = new Map(deviceUuids.map((u, i) => [u, devices[i]]));
  // Holders of a device: the allocated handles of all its deployables, those without inventory too.
  const holders = new Map<string, number>();
  rps.forEach((rp, i) => rp && holders.set(rp.deviceUuid as string, (holders.get(rp.deviceUuid as string) ?? 0) + counts[3 * i]!));
  const stateOf = new Map(deviceUuids.map((u) => [u, lifecycleOf(lifecycleInputs(deviceOf.get(u), holders.get(u) ?? 0))]));
  const out: ResourceProviderView[] = [];
  const carried = new Set<string>();
  rps.forEach((rp, i) => {
    if (!rp) return;
    const { resourceClass, traits } = attributesView(attrs[i]!, orders[i]!);
    if (resourceClass === null) return;
    const total = rp.total as number;
    const [used, handles, lostHandles] = counts.slice(3 * i, 3 * i + 3) as [number, number, number];
    const device = deviceOf.get(rp.deviceUuid as string);
    const deviceState = stateOf.get(rp.deviceUuid as string)!;
    const availability = { notOffered: !isOffered(deviceState), deviceLost: device?.lost === true, handles, lostHandles };
    // The device's first provider that is not a partition profile's (those record what they can hold) carries its capacities.
    const carrier = rp.available === undefined && !carried.has(rp.deviceUuid as string);
    if (carrier) carried.add(rp.deviceUuid as string);
    out.push({
      uuid: rp.uuid as string,
      name: rp.name as string,
      parentProviderName: rp.parentProviderName as string,
      resourceClass,
      total,
      reserved: reservedOf(total, { ...availability, available: rp.available === undefined || rp.available === null ? null : Number(rp.available) }),
      used,
      traits,
      deployableUuid: rp.deployableUuid as string,
      deviceUuid: rp.deviceUuid as string,
      deviceState,
      capacities: carrier ? capacitiesOf(device, draws[i], availability) : [],
    });
  });
  return out;
}

/** The device's reported capacities, reserved as its provider is, with what the ARQs holding the carrier's handles draw. */
function capacitiesOf(device: Record<string, unknown> | null | undefined, draws: Record<string, unknown> | null | undefined, availability: Omit<ProviderAvailability, "available">): ProviderCapacityView[] {
  if (typeof device?.capacities !== "string") return [];
  const used = new Map<string, number>();
  for (const raw of Object.values(draws ?? {})) {
    for (const d of JSON.parse(raw as string) as CapacityDraw[]) used.set(d.resourceClass, (used.get(d.resourceClass) ?? 0) + d.amount);
  }
  return (JSON.parse(device.capacities) as DriverCapacity[]).map((c) => ({ resourceClass: c.resourceClass, total: c.total, reserved: reservedOf(c.total, { ...availability, available: null }), used: used.get(c.resourceClass) ?? 0 }));
}

/**
 * The lifecycle inputs the read model knows of a device: its taints' effects, one field each
 * (`taint:<key> <effect>`); a doc written before those fields were kept has only Cyborg's status,
 * and MAINTAINING then stands for a NoSchedule taint (it still says whether the device is offered).
 */
function lifecycleInputs(device: Record<string, unknown> | null | undefined, holders: number): LifecycleInputs {
  const taints = Object.entries(device ?? {}).flatMap(([f, effect]) => (f.startsWith("taint:") ? [{ effect: effect as TaintEffect }] : []));
  if (taints.length === 0 && device?.status === "MAINTAINING") taints.push({ effect: "NoSchedule" });
  return {
    taints,
    holders,
    cleaning: device?.cleaning === true,
    qualifying: device?.qualifying === true,
    failed: device?.failed === true,
  };
}

/** One host's capacity of one resource class: its providers' totals, used and reserved, summed. */
export type HostCapacityView = { hostname: string; resourceClass: string; total: number; used: number; reserved: number };

/** Capacity per host and resource class (hosts, then classes, in the order their providers were added). */
function capacityOf(rps: readonly ResourceProviderView[]): HostCapacityView[] {
  const rows = new Map<string, HostCapacityView>();
  for (const rp of rps) {
    const key = JSON.stringify([rp.parentProviderName, rp.resourceClass]);
    const row = rows.get(key) ?? { hostname: rp.parentProviderName, resourceClass: rp.resourceClass, total: 0, used: 0, reserved: 0 };
    row.total += rp.total;
    row.used += rp.used;
    row.reserved += rp.reserved;
    rows.set(key, row);
  }
  return [...rows.values()];
}

/** One device and its lifecycle state. */
export type DeviceStateView = { deviceUuid: string; state: DeviceLifecycleState };

/** One host's part of the fleet (what the metrics' capacity and device gauges show): its capacity per class, and each device with a provider and its lifecycle state. */
export type FleetHostView = { hostname: string; capacity: HostCapacityView[]; devices: DeviceStateView[] };

/** The named hosts' parts of the fleet; a host without providers is left out. */
export async function fleetHosts(store: ReadStore, hostnames: readonly string[]): Promise<FleetHostView[]> {
  const providers = await Promise.all(hostnames.map((h) => listResourceProviders(store, h)));
  return providers.flatMap((rps, i) => {
    if (rps.length === 0) return [];
    const devices = new Map<string, DeviceLifecycleState>();
    for (const rp of rps) devices.set(rp.deviceUuid, rp.deviceState);
    return [{ hostname: hostnames[i]!, capacity: capacityOf(rps), devices: [...devices].map(([deviceUuid, state]) => ({ deviceUuid, state })) }];
  });
}

/** The fleet, host by host, as one process keeps it (a scrape reads it: only the hosts changed since the last are read again). */
export class FleetView implements HostView<FleetHostView> {
  private readonly byName = new Map<string, FleetHostView>();

  put(host: FleetHostView): void {
    this.byName.set(host.hostname, host);
  }

  remove(hostname: string): void {
    this.byName.delete(hostname);
  }

  /** Every host's part, each the same object while nothing of the host changed. */
  hosts(): FleetHostView[] {
    return [...this.byName.values()];
  }
}

/** The fleet kept by a host-feed over this model (projections/shared/host-feed.ts), read at `pacing`'s pace where given. */
export function fleetFeed(store: ReadStore, pacing?: () => Pacing): HostFeed<FleetHostView, FleetView> {
  return new HostFeed(store, { models: [name], changedSince: [hostsChangedSince], read: fleetHosts, empty: () => new FleetView() }, pacing);
}

/** Hosts whose providers changed at or after `position` (every host with a provider's event when undefined). */
export function hostsChangedSince(store: ReadStore, position: bigint | undefined): Promise<string[]> {
  return changedSince(store, k, position);
}

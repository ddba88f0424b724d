/** The resource-providers read model's query: deployables as Placement sees them. */
import { isOffered, lifecycleOf, type LifecycleInputs } from "../../src/domain/inventory/device-lifecycle.js";
import { reservedOf } from "../../src/domain/inventory/resource-providers.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { attributesView } from "../shared/deployables.js";
import { k } from "./projection.js";

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
};

/**
 * Every accelerator RP (of one host), in the order the deployables were added. A deployable
 * without an `rc` attribute (e.g. an FPGA region above its functions) has no inventory in
 * Placement, so it is no RP. Three round trips. `reserved` is the domain's rule
 * (reservedOf, src/domain/inventory/resource-providers.ts) on what the read model counts.
 */
export async function listResourceProviders(store: ReadStore, hostname?: string | null): Promise<ResourceProviderView[]> {
  const [members] = await store.getMembers([hostname ? k("by-host", hostname) : k("all")]);
  const deps = members!;
  const [rps, attrs, orders, counts] = await Promise.all([
    store.getDocs(deps.map((u) => k("rp", u))),
    store.getDocs(deps.map((u) => k("attrs", u))),
    store.getMembers(deps.map((u) => k("attr-order", u))),
    store.count(deps.flatMap((u) => [k("in-use", u), k("handles", u), k("lost", u)])),
  ]);
  const deviceUuids = [...new Set(rps.flatMap((rp) => (rp ? [rp.deviceUuid as string] : [])))];
  const devices = await store.getDocs(deviceUuids.map((u) => k("device", u)));
  const deviceOf = new Map(deviceUuids.map((u, i) => [u, devices[i]]));
  const out: ResourceProviderView[] = [];
  rps.forEach((rp, i) => {
    if (!rp) return;
    const { resourceClass, traits } = attributesView(attrs[i]!, orders[i]!);
    if (resourceClass === null) return;
    const total = rp.total as number;
    const [used, handles, lostHandles] = counts.slice(3 * i, 3 * i + 3) as [number, number, number];
    const device = deviceOf.get(rp.deviceUuid as string);
    out.push({
      uuid: rp.uuid as string,
      name: rp.name as string,
      parentProviderName: rp.parentProviderName as string,
      resourceClass,
      total,
      reserved: reservedOf(total, { notOffered: !isOffered(lifecycleOf(lifecycleInputs(device))), deviceLost: device?.lost === true, handles, lostHandles }),
      used,
      traits,
      deployableUuid: rp.deployableUuid as string,
      deviceUuid: rp.deviceUuid as string,
    });
  });
  return out;
}

/**
 * The lifecycle inputs the read model knows of a device: Cyborg's status MAINTAINING stands for its
 * taints (only whether it is offered is read from it, so their effect and the holders do not matter).
 */
function lifecycleInputs(device: Record<string, unknown> | null | undefined): LifecycleInputs {
  return {
    taints: device?.status === "MAINTAINING" ? [{ effect: "NoSchedule" }] : [],
    holders: 0,
    cleaning: device?.cleaning === true,
    qualifying: device?.qualifying === true,
    failed: device?.failed === true,
  };
}

/** One host's capacity of one resource class: its providers' totals, used and reserved, summed. */
export type HostCapacityView = { hostname: string; resourceClass: string; total: number; used: number; reserved: number };

/** Capacity per host and resource class (hosts, then classes, in the order their providers were added). */
export async function capacityByHost(store: ReadStore): Promise<HostCapacityView[]> {
  const rows = new Map<string, HostCapacityView>();
  for (const rp of await listResourceProviders(store)) {
    const key = JSON.stringify([rp.parentProviderName, rp.resourceClass]);
    const row = rows.get(key) ?? { hostname: rp.parentProviderName, resourceClass: rp.resourceClass, total: 0, used: 0, reserved: 0 };
    row.total += rp.total;
    row.used += rp.used;
    row.reserved += rp.reserved;
    rows.set(key, row);
  }
  return [...rows.values()];
}

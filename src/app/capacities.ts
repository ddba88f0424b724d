/**
 * A device's capacities as an operator reads them: each amount, what is drawn and by which ARQs.
 * The rules are domain/inventory/capacity.ts and capacity-record.ts.
 */
import { capacityFree, capacityUsed } from "../domain/inventory/capacity.js";
import { capacityStatesOf } from "../domain/inventory/capacity-record.js";
import { validateHostname } from "../domain/inventory/report-validation.js";
import type { DeviceNode, HostState } from "../domain/inventory/state.js";
import { aggregates, type Streams } from "./streams.js";

export interface DeviceCapacityView {
  name: string;
  resourceClass: string;
  unit: string;
  total: number;
  used: number;
  free: number;
  /** The ARQs drawing from it, with their amounts, in the order they drew. */
  holders: Array<{ arqUuid: string; amount: number }>;
}

export function deviceCapacitiesView(state: Pick<HostState, "allocations">, device: DeviceNode): DeviceCapacityView[] {
  return capacityStatesOf(state, device).map((c) => ({
    name: c.name,
    resourceClass: c.resourceClass,
    unit: c.unit,
    total: c.total,
    used: capacityUsed(c),
    free: capacityFree(c),
    holders: [...c.draws].map(([arqUuid, amount]) => ({ arqUuid, amount })),
  }));
}

export async function deviceCapacities(s: Streams, hostname: string, deviceUuid: string): Promise<DeviceCapacityView[]> {
  const { state } = await s.load(aggregates.host, validateHostname(hostname));
  const device = state.devices.get(deviceUuid);
  return device ? deviceCapacitiesView(state, device) : [];
}

/** Inventories and traits as the sync compares and writes them. */
import type { DesiredProvider } from "../../domain/inventory/resource-providers.js";
import type { Inventories } from "./client.js";

/**
 * What a desired provider's inventories are in Placement: its class, none when it has no
 * accelerator (total >= 1 there), and one per capacity it carries (a NIC port's bandwidth).
 */
export function desiredInventories(d: DesiredProvider): Inventories {
  const out: Inventories = {};
  if (d.total >= 1) out[d.resourceClass] = inventory(d.total, d.reserved);
  for (const c of d.capacities) out[c.resourceClass] = inventory(c.total, c.reserved);
  return out;
}

const inventory = (total: number, reserved: number) => ({ total, reserved, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1 });

export const reserveAll = (cur: Inventories): Inventories => Object.fromEntries(Object.entries(cur).map(([rc, r]) => [rc, { ...r, reserved: r.total }]));

const FIELDS = ["total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio"] as const;

export function sameInventories(a: Inventories, b: Inventories): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((rc) => b[rc] !== undefined && FIELDS.every((f) => a[rc]![f] === b[rc]![f]));
}

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}

export function describeInventories(inv: Inventories): string {
  const parts = Object.entries(inv).map(([rc, r]) => `${rc} total=${r.total} reserved=${r.reserved}${r.max_unit !== r.total ? ` max_unit=${r.max_unit}` : ""}`);
  return parts.length ? parts.join(", ") : "no inventory";
}

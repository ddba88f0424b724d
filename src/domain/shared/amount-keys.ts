/**
 * Amounts a group draws from its device's capacities (a NIC port's bandwidth), beside the handle
 * it binds, as Neutron's minimum-bandwidth ports ask Placement for a VF and kilobits per second
 * of one provider: `resources:SRIOV_NET_VF=1` with `resources:NET_BW_EGR_KILOBIT_PER_SEC=1000000`.
 *
 * A `resources:` key is an amount when its class is one of Placement's standard amount classes
 * below, or a class the group names in `accel:amounts` (a custom capacity such as
 * `CUSTOM_NET_BW_MBPS`). An amount is not a count of accelerators: it makes no ARQ, and each ARQ
 * of the group draws it. Device-profile validation and the bind both read the keys through here.
 */
import { normalizeTraitName, STANDARD_AMOUNT_CLASSES } from "./traits.js";

export const AMOUNTS_KEY = "accel:amounts";

export { STANDARD_AMOUNT_CLASSES };

/** The most one group may draw of one class, as a driver's capacity total is bounded. */
export const MAX_DRAW_AMOUNT = 1_000_000_000;
const MAX_AMOUNT_CLASSES = 16;
const CLASS_RE = /^CUSTOM_[A-Z0-9_]{1,248}$/;

export interface AmountNeed {
  resourceClass: string;
  amount: number;
}

/**
 * Parses `accel:amounts`: comma-separated custom resource classes (normalised). Throws an Error
 * whose message names the entry and what is wrong with it.
 */
export function parseAmountClasses(raw: string): string[] {
  const parts = raw.split(",").map((p) => normalizeTraitName(p));
  if (parts.length > MAX_AMOUNT_CLASSES) throw new Error(`at most ${MAX_AMOUNT_CLASSES} classes, got ${parts.length}`);
  const seen = new Set<string>();
  for (const p of parts) {
    if (p === "") throw new Error("an empty entry: give comma-separated resource classes such as CUSTOM_NET_BW_MBPS");
    if ((STANDARD_AMOUNT_CLASSES as readonly string[]).includes(p)) throw new Error(`${p} is a standard amount class: its resources: key is an amount without being named here`);
    if (!CLASS_RE.test(p)) throw new Error(`${p} is not a custom resource class (CUSTOM_[A-Z0-9_]+)`);
    if (seen.has(p)) throw new Error(`${p} is named twice`);
    seen.add(p);
  }
  return parts;
}

/** The classes whose `resources:` keys are amounts in this group (standard ones, and those `accel:amounts` names). */
export function amountClassesOf(group: Readonly<Record<string, string>>): Set<string> {
  const out = new Set<string>(STANDARD_AMOUNT_CLASSES);
  const raw = group[AMOUNTS_KEY];
  if (raw !== undefined) {
    try {
      for (const c of parseAmountClasses(raw)) out.add(c);
    } catch {
      // A stored group was validated; one that does not parse names no custom amount.
    }
  }
  return out;
}

/** Whether `resources:<resourceClass>` of the group is an amount (not a count of accelerators). */
export function isAmountClass(group: Readonly<Record<string, string>>, resourceClass: string): boolean {
  return amountClassesOf(group).has(resourceClass);
}

/** The group's amounts, in key order. */
export function amountsOf(group: Readonly<Record<string, string>>): AmountNeed[] {
  const classes = amountClassesOf(group);
  const out: AmountNeed[] = [];
  for (const [key, value] of Object.entries(group)) {
    if (!key.startsWith("resources:")) continue;
    const resourceClass = key.slice("resources:".length);
    if (classes.has(resourceClass)) out.push({ resourceClass, amount: Number(value) });
  }
  return out;
}

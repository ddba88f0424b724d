/**
 * The weigher (seed cyborg-nova-glance-interaction: "Cyborg may provide a weigher that prioritizes
 * hosts based on available accelerator resources"): hosts ranked for a device profile by what they
 * can still give it. Pure: the read side hands it each host's resource providers.
 *
 * For each of the profile's groups, a provider matches when it offers the group's resource class
 * and carries every required trait and none of the forbidden ones. A host fits when each group has
 * a matching provider with room for the group's amount (Placement puts a group on one provider).
 * Hosts are ordered by: fits, then free handles on providers already running the function or
 * bitstream the groups need (no programming at bind), then free handles on matching providers.
 */
import { amountClassesOf } from "../shared/amount-keys.js";
import { isFunctionTraitFor } from "../shared/traits.js";

export interface WeighedProvider {
  resourceClass: string;
  traits: readonly string[];
  total: number;
  reserved: number;
  used: number;
  /** The bitstream the region runs, where the read side knows it. */
  bitstreamId?: string | null;
}

export interface HostWeight {
  hostname: string;
  /** 0 to 1: 1 for the best host, 0 for one that does not fit; equal hosts weigh the same. */
  weight: number;
  fits: boolean;
  /** Free handles on providers matching a group, summed over the groups. */
  free: number;
  /** Of those, free handles on providers that already run what their group needs (no programming). */
  ready: number;
  /** Why the host does not fit; null when it does. */
  reason: string | null;
}

type Group = Readonly<Record<string, string>>;

export function weighHosts(groups: readonly Group[], hosts: ReadonlyMap<string, readonly WeighedProvider[]>): HostWeight[] {
  const scored = [...hosts].map(([hostname, providers]) => scoreHost(hostname, groups, providers));
  // Dense rank of the fitting hosts' (ready, free), spread over (0, 1].
  const keys = [...new Set(scored.filter((h) => h.fits).map((h) => key(h)))].sort(compareKeys);
  const rank = new Map(keys.map((k, i) => [k, (i + 1) / keys.length]));
  return scored
    .map((h) => ({ ...h, weight: h.fits ? rank.get(key(h))! : 0 }))
    .sort((a, b) => b.weight - a.weight || b.free - a.free || a.hostname.localeCompare(b.hostname));
}

const key = (h: { ready: number; free: number }) => `${h.ready}:${h.free}`;
function compareKeys(a: string, b: string): number {
  const [ra, fa] = a.split(":").map(Number) as [number, number];
  const [rb, fb] = b.split(":").map(Number) as [number, number];
  return ra - rb || fa - fb;
}

function scoreHost(hostname: string, groups: readonly Group[], providers: readonly WeighedProvider[]): Omit<HostWeight, "weight"> {
  let free = 0;
  let ready = 0;
  let reason: string | null = null;
  groups.forEach((group, i) => {
    const need = groupNeed(group);
    let room = false;
    for (const p of providers) {
      if (!matches(p, need)) continue;
      const left = Math.max(0, p.total - p.reserved - p.used);
      free += left;
      if (runsNeed(p, need)) ready += left;
      if (need.amount <= 0 || left >= need.amount) room = true;
    }
    if (!room && reason === null) {
      reason = `no provider on ${hostname} has ${need.amount} free ${need.resourceClass ?? "accelerator"}(s) for group ${i}${traitWords(need)}`;
    }
  });
  return { hostname, fits: reason === null, free, ready, reason };
}

interface GroupNeed {
  resourceClass: string | null;
  amount: number;
  required: string[];
  forbidden: string[];
  functionId: string | null;
  bitstreamId: string | null;
  /** accel:function_name or accel:bitstream_name: only the catalogue says what they stand for, so no region counts as ready. */
  byName: boolean;
}

function groupNeed(group: Group): GroupNeed {
  const need: GroupNeed = {
    resourceClass: null,
    amount: 0,
    required: [],
    forbidden: [],
    functionId: group["accel:function_id"] ?? null,
    bitstreamId: group["accel:bitstream_id"] ?? null,
    byName: group["accel:function_name"] !== undefined || group["accel:bitstream_name"] !== undefined,
  };
  const amounts = amountClassesOf(group);
  for (const [k, v] of Object.entries(group)) {
    // An amount drawn from a capacity rides with the group's accelerator; the weigher ranks by the accelerator.
    if (k.startsWith("resources:") && !amounts.has(k.slice("resources:".length))) {
      need.resourceClass = k.slice("resources:".length);
      need.amount = Number(v);
    } else if (k.startsWith("trait:")) {
      (v === "forbidden" ? need.forbidden : need.required).push(k.slice("trait:".length));
    }
  }
  return need;
}

function matches(p: WeighedProvider, need: GroupNeed): boolean {
  if (need.resourceClass !== null && p.resourceClass !== need.resourceClass) return false;
  return need.required.every((t) => p.traits.includes(t)) && !need.forbidden.some((t) => p.traits.includes(t));
}

/** The provider already does what the group needs: its bitstream, or a trait reporting its function. */
function runsNeed(p: WeighedProvider, need: GroupNeed): boolean {
  if (need.byName) return false;
  if (need.bitstreamId !== null) return p.bitstreamId === need.bitstreamId;
  const functionId = need.functionId;
  if (functionId === null) return true;
  return p.traits.some((t) => isFunctionTraitFor(t, functionId));
}

function traitWords(need: GroupNeed): string {
  const parts = [...need.required.map((t) => `with ${t}`), ...need.forbidden.map((t) => `without ${t}`)];
  return parts.length ? ` (${parts.join(", ")})` : "";
}

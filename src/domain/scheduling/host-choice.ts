/**
 * The choice on one host: every group assigned to a provider (the first alternative that fits, on
 * the provider the weigher would prefer), honouring the groups' shared topology. Groups share a
 * provider only when its free handles cover their amounts together.
 */
import type { DeviceTopology } from "../inventory/topology-report.js";
import { isFunctionTraitFor } from "../shared/traits.js";
import { openToAll, providerRoom } from "./fit.js";
import { tieBreak } from "./spread.js";
import type { Assignment, CandidateHost, CandidateProvider, GroupRequest, HostChoice, MatchAttribute, Need, PlacementRequest } from "./types.js";

interface Option {
  alternative: number;
  need: Need;
  provider: CandidateProvider;
  ready: boolean;
}

/** A search gives up after this many steps (a pathological profile): the host counts as not fitting. */
export const MAX_STEPS = 20_000;

/** Handles already taken on a provider by earlier choices (capacity counts repeated choices on one host). */
export type Taken = ReadonlyMap<string, number>;

/** Nothing taken yet (a decision's own choice): shared, never written. */
const NOTHING_TAKEN: Taken = new Map();

/** `spread`: the request's key, ordering providers the weigher ranks equal (spread.ts). */
export function chooseOnHost(host: CandidateHost, request: PlacementRequest, taken: Taken = NOTHING_TAKEN, spread?: string | null): HostChoice | null {
  const options = request.groups.map((g) => optionsFor(host, g, taken, spread));
  if (options.some((o) => o.length === 0)) return null;
  const picked = search(request.groups, options, taken);
  if (picked === null) return null;
  return scoreChoice(host.hostname, picked, options, taken);
}

/** The providers that could take the group on their own, best first: preferred alternative, ready, most free, uuid (hashed with `spread`). */
export function optionsFor(host: CandidateHost, group: GroupRequest, taken: Taken, spread?: string | null): Option[] {
  const out: Option[] = [];
  const byClass = providersByClass(host);
  for (let alternative = 0; alternative < group.alternatives.length; alternative++) {
    const need = group.alternatives[alternative]!;
    const from = out.length;
    for (const provider of byClass.get(need.resourceClass) ?? NONE) {
      const room = providerRoom(provider, need, group.tolerations, taken.get(provider.rpUuid) ?? 0);
      if (typeof room === "number") insertFrom(out, from, { alternative, need, provider, ready: runsNeed(provider, group) }, spread);
    }
  }
  return out;
}

const NONE: readonly CandidateProvider[] = [];

/** Inserts the option among those from `from` on, in order (a host has a few providers of a class: no sort's copy). */
function insertFrom(out: Option[], from: number, o: Option, spread: string | null | undefined): void {
  let i = out.length;
  out.push(o);
  while (i > from && betterOption(o, out[i - 1]!, spread)) {
    out[i] = out[i - 1]!;
    i--;
  }
  out[i] = o;
}

/** Ready first, then most free, then by uuid, hashed with `spread` when there is one (a total order: providers' uuids differ). */
function betterOption(a: Option, b: Option, spread: string | null | undefined): boolean {
  if (a.ready !== b.ready) return a.ready;
  if (a.provider.free !== b.provider.free) return a.provider.free > b.provider.free;
  return tieBreak(spread, a.provider.rpUuid, b.provider.rpUuid) < 0;
}

/** Free handles on the host's providers of a class, whatever their traits or taints (a bound); `openOnly`: on those open to a request that tolerates nothing. */
export function freeOfClass(host: CandidateHost, resourceClass: string, openOnly = false): number {
  let free = 0;
  for (const p of providersByClass(host).get(resourceClass) ?? NONE) if (!openOnly || openToAll(p)) free += p.free;
  return free;
}

const classMaps = new WeakMap<CandidateHost, Map<string, CandidateProvider[]>>();

/** The host's providers by resource class, computed once per host object. */
function providersByClass(host: CandidateHost): Map<string, CandidateProvider[]> {
  let m = classMaps.get(host);
  if (m) return m;
  m = new Map();
  for (const p of host.providers) {
    const list = m.get(p.resourceClass);
    if (list) list.push(p);
    else m.set(p.resourceClass, [p]);
  }
  classMaps.set(host, m);
  return m;
}

function search(groups: readonly GroupRequest[], options: Option[][], taken: Taken): Option[] | null {
  const used = taken.size === 0 ? new Map<string, number>() : new Map(taken);
  const matched = new Map<MatchAttribute, string | number>();
  const picked: Option[] = [];
  let steps = 0;
  const step = (i: number): boolean => {
    if (i === groups.length) return true;
    for (const o of options[i]!) {
      if (++steps > MAX_STEPS) return false;
      const before = used.get(o.provider.rpUuid) ?? 0;
      if (o.provider.free - before < o.need.amount) continue;
      const set = matchValues(groups[i]!.match, o.provider.topology, matched);
      if (set === null) continue;
      used.set(o.provider.rpUuid, before + o.need.amount);
      picked.push(o);
      if (step(i + 1)) return true;
      picked.pop();
      used.set(o.provider.rpUuid, before);
      for (const a of set) matched.delete(a);
    }
    return false;
  };
  return step(0) ? picked : null;
}

/** Records the provider's values of the group's attributes; null when one is unknown or differs. Returns the attributes it set. */
function matchValues(attrs: readonly MatchAttribute[], topology: DeviceTopology | null, matched: Map<MatchAttribute, string | number>): MatchAttribute[] | null {
  const set: MatchAttribute[] = [];
  for (const a of attrs) {
    const v = topologyValue(topology, a);
    const have = matched.get(a);
    if (v === null || (have !== undefined && have !== v)) {
      for (const s of set) matched.delete(s);
      return null;
    }
    if (have === undefined) {
      matched.set(a, v);
      set.push(a);
    }
  }
  return set;
}

export function topologyValue(t: DeviceTopology | null, a: MatchAttribute): string | number | null {
  if (t === null) return null;
  switch (a) {
    case "numa_node":
      return t.numaNode;
    case "pcie_root":
      return t.pcieRoot;
    case "pcie_switch":
      return t.pcieSwitch;
    case "link_domain":
      return t.linkDomain;
  }
}

/** The weigher's numbers for the choice: free (and ready) handles on the providers meeting each group's chosen alternative. */
function scoreChoice(hostname: string, picked: Option[], options: Option[][], taken: Taken): HostChoice {
  let free = 0;
  let ready = 0;
  const assignments: Assignment[] = picked.map((o, group) => {
    for (const other of options[group]!) {
      if (other.alternative !== o.alternative) continue;
      const left = other.provider.free - (taken.get(other.provider.rpUuid) ?? 0);
      free += left;
      if (other.ready) ready += left;
    }
    return { group, alternative: o.alternative, rpUuid: o.provider.rpUuid, deviceUuid: o.provider.deviceUuid, resourceClass: o.need.resourceClass, amount: o.need.amount };
  });
  return { hostname, assignments, free, ready };
}

function runsNeed(p: CandidateProvider, g: GroupRequest): boolean {
  if (g.byName) return false;
  if (g.bitstreamId !== null) return p.bitstreamId === g.bitstreamId;
  if (g.functionId === null) return true;
  for (const t of p.traits) if (isFunctionTraitFor(t, g.functionId)) return true;
  return false;
}

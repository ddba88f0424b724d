/**
 * Why a request cannot be placed (or where it could): per host, the first rule that ruled it out,
 * and per group and provider, the first rule that ruled the provider out against the alternative
 * that came closest, with what would have to change.
 */
import { allowedBy, type CandidateIndex } from "./candidates.js";
import { providerFit } from "./fit.js";
import { chooseOnHost } from "./host-choice.js";
import { RULES, type CandidateHost, type CandidateProvider, type GroupRequest, type PlacementLimits, type PlacementRequest, type Rule, type RuledOut } from "./types.js";

export interface ProviderVerdict {
  rpUuid: string;
  deviceUuid: string;
  /** The alternative it was judged against (the one it fits, or the one it came closest to). */
  alternative: number;
  /** Null: the provider could take the group on its own. */
  ruledOut: RuledOut | null;
}

export interface HostVerdict {
  hostname: string;
  /** Null: the request fits on this host. */
  ruledOut: RuledOut | null;
  groups: { group: number; providers: ProviderVerdict[] }[];
}

export interface Explanation {
  /** Hosts considered. */
  hosts: number;
  /** Hosts where the request fits now. */
  fitting: number;
  /** Hosts ruled out, per rule (each host counted under its first rule). */
  byRule: { rule: Rule; hosts: number }[];
  /** In detail, the hosts closest to fitting first (then by name), at most `detail` of them. */
  detail: HostVerdict[];
}

export function explain(request: PlacementRequest, index: CandidateIndex, limits: PlacementLimits = {}, detail = 20): Explanation {
  const counts = new Map<Rule, number>();
  const verdicts: HostVerdict[] = [];
  let fitting = 0;
  for (const host of index.hosts) {
    const v = judgeHost(host, request, limits);
    if (v.ruledOut === null) fitting++;
    else counts.set(v.ruledOut.rule, (counts.get(v.ruledOut.rule) ?? 0) + 1);
    verdicts.push(v);
  }
  verdicts.sort((a, b) => closeness(b) - closeness(a) || (a.hostname < b.hostname ? -1 : 1));
  return {
    hosts: index.hosts.length,
    fitting,
    byRule: RULES.filter((r) => counts.has(r)).map((rule) => ({ rule, hosts: counts.get(rule)! })),
    detail: verdicts.slice(0, detail),
  };
}

const closeness = (v: HostVerdict) => (v.ruledOut === null ? RULES.length : RULES.indexOf(v.ruledOut.rule));

export function judgeHost(host: CandidateHost, request: PlacementRequest, limits: PlacementLimits): HostVerdict {
  const groups = request.groups.map((g, group) => ({ group, providers: host.providers.map((p) => judgeProvider(p, g)) }));
  return { hostname: host.hostname, ruledOut: hostRule(host, request, limits, groups), groups };
}

function hostRule(host: CandidateHost, request: PlacementRequest, limits: PlacementLimits, groups: HostVerdict["groups"]): RuledOut | null {
  if (!request.enabled) return { rule: "PROFILE_DISABLED", message: "the device profile is disabled", change: "the profile enabled again" };
  if (!allowedBy(limits, host.hostname)) {
    const where = limits.instanceHost != null ? `the instance is on ${limits.instanceHost}` : "the request names other hosts";
    return { rule: "HOST_LIMIT", message: `${where}`, change: `${host.hostname} among the hosts the request allows` };
  }
  if (host.stale) return { rule: "STALE_AGENT", message: `the agent on ${host.hostname} has not reported in time`, change: "the host's agent reporting again" };
  for (const g of groups) {
    if (g.providers.some((p) => p.ruledOut === null)) continue;
    const closest = g.providers.map((p) => p.ruledOut!).sort((a, b) => RULES.indexOf(b.rule) - RULES.indexOf(a.rule))[0];
    if (!closest) return { rule: "RESOURCE_CLASS", message: `${host.hostname} has no accelerator providers (group ${g.group})`, change: "a device of the class the group asks for on the host" };
    return { ...closest, message: `group ${g.group}: no provider fits; the closest: ${closest.message}` };
  }
  if (chooseOnHost(host, request) !== null) return null;
  const matching = request.groups.some((g) => g.match.length > 0);
  return matching
    ? { rule: "TOPOLOGY", message: "each group has a provider, but none share the topology the groups must match (accel:match)", change: "devices sharing that NUMA node, PCIe root or switch, or link domain, free together" }
    : { rule: "NO_FREE_HANDLE", message: "each group has a provider, but not enough free handles for all groups together", change: "more free handles on the host" };
}

function judgeProvider(p: CandidateProvider, g: GroupRequest): ProviderVerdict {
  let best: { alternative: number; ruledOut: RuledOut } | null = null;
  for (let alternative = 0; alternative < g.alternatives.length; alternative++) {
    const fit = providerFit(p, g.alternatives[alternative]!, g.tolerations);
    if (fit.ok) return { rpUuid: p.rpUuid, deviceUuid: p.deviceUuid, alternative, ruledOut: null };
    const ruledOut: RuledOut = { rule: fit.rule, message: fit.message, change: fit.change };
    if (best === null || RULES.indexOf(fit.rule) > RULES.indexOf(best.ruledOut.rule)) best = { alternative, ruledOut };
  }
  return { rpUuid: p.rpUuid, deviceUuid: p.deviceUuid, alternative: best?.alternative ?? 0, ruledOut: best?.ruledOut ?? null };
}

/** The short form a refused bind carries: counts per rule and the closest host's reason. */
export function shortExplanation(e: Explanation): { hosts: number; fitting: number; byRule: Explanation["byRule"]; closest: { hostname: string; rule: Rule; message: string; change: string } | null } {
  const c = e.detail.find((d) => d.ruledOut !== null);
  return { hosts: e.hosts, fitting: e.fitting, byRule: e.byRule, closest: c ? { hostname: c.hostname, ...c.ruledOut! } : null };
}

/**
 * Why a request cannot be placed (or where it could): per host, the first rule that ruled it out,
 * and per group and provider, the first rule that ruled the provider out against the alternative
 * that came closest, with what would have to change.
 */
import { allowedBy, staleHost, type CandidateIndex } from "./candidates.js";
import { providerFit, providerRoom } from "./fit.js";
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
  /** Hosts ruled out, per rule (each host counted under its first rule), with one of them in words. */
  byRule: RuleCount[];
  /** In detail, the hosts closest to fitting first (then by name), at most `detail` of them. */
  detail: HostVerdict[];
}

/** The hosts a rule ruled out first, and the first of them by name in words (what ruled it out, what would change). */
export interface RuleCount {
  rule: Rule;
  hosts: number;
  example: { hostname: string; message: string; change: string };
}

export function explain(request: PlacementRequest, index: CandidateIndex, limits: PlacementLimits = {}, detail = 20): Explanation {
  const counts = new Map<Rule, number>();
  // Per rule, the first host it ruled out by name (its example); and the `detail` closest hosts, kept in order as they come.
  const firstOf = new Map<Rule, CandidateHost>();
  const closest: Ruled[] = [];
  let fitting = 0;
  for (const host of index.hosts) {
    const rule = hostRuleOf(host, request, limits);
    if (rule === null) fitting++;
    else {
      counts.set(rule, (counts.get(rule) ?? 0) + 1);
      const first = firstOf.get(rule);
      if (first === undefined || host.hostname < first.hostname) firstOf.set(rule, host);
    }
    keepClosest(closest, host, rule, detail);
  }
  return {
    hosts: index.hosts.length,
    fitting,
    byRule: RULES.filter((r) => counts.has(r)).map((rule) => ({ rule, hosts: counts.get(rule)!, example: exampleOf(firstOf.get(rule)!, request, limits) })),
    detail: closest.map((r) => judgeHost(r.host, request, limits)),
  };
}

interface Ruled {
  host: CandidateHost;
  rule: Rule | null;
  closeness: number;
}

/** Closer to fitting first, then by name: a fleet's hosts are not sorted (nor wrapped) to show twenty of them. */
function keepClosest(kept: Ruled[], host: CandidateHost, rule: Rule | null, most: number): void {
  const close = closeness(rule);
  const before = (b: Ruled) => close > b.closeness || (close === b.closeness && host.hostname < b.host.hostname);
  if (most <= 0 || (kept.length === most && !before(kept[kept.length - 1]!))) return;
  let i = kept.length;
  while (i > 0 && before(kept[i - 1]!)) i--;
  kept.splice(i, 0, { host, rule, closeness: close });
  if (kept.length > most) kept.pop();
}

function exampleOf(host: CandidateHost, request: PlacementRequest, limits: PlacementLimits): RuleCount["example"] {
  const { message, change } = judgeHost(host, request, limits).ruledOut!;
  return { hostname: host.hostname, message, change };
}

const closeness = (rule: Rule | null) => (rule === null ? RULES.length : RULES.indexOf(rule));

/** The first rule that rules the host out (null: the request fits there), without the words: cheap enough for every host. */
export function hostRuleOf(host: CandidateHost, request: PlacementRequest, limits: PlacementLimits): Rule | null {
  if (!request.enabled) return "PROFILE_DISABLED";
  if (!allowedBy(limits, host.hostname)) return "HOST_LIMIT";
  if (staleHost(limits, host)) return "STALE_AGENT";
  for (const g of request.groups) {
    let closest = -1;
    let fits = false;
    for (const p of host.providers) {
      for (const need of g.alternatives) {
        const room = providerRoom(p, need, g.tolerations);
        if (typeof room === "number") fits = true;
        else closest = Math.max(closest, RULES.indexOf(room));
      }
      if (fits) break;
    }
    if (!fits) return closest < 0 ? "RESOURCE_CLASS" : RULES[closest]!;
  }
  if (chooseOnHost(host, request) !== null) return null;
  return request.groups.some((g) => g.match.length > 0) ? "TOPOLOGY" : "NO_FREE_HANDLE";
}

export function judgeHost(host: CandidateHost, request: PlacementRequest, limits: PlacementLimits): HostVerdict {
  const groups = request.groups.map((g, group) => ({ group, providers: host.providers.map((p) => judgeProvider(p, g)) }));
  const rule = hostRuleOf(host, request, limits);
  return { hostname: host.hostname, ruledOut: rule === null ? null : hostWords(rule, host, limits, groups), groups };
}

function hostWords(rule: Rule, host: CandidateHost, limits: PlacementLimits, groups: HostVerdict["groups"]): RuledOut {
  switch (rule) {
    case "PROFILE_DISABLED":
      return { rule, message: "the device profile is disabled", change: "the profile enabled again" };
    case "HOST_LIMIT":
      return { rule, message: limits.instanceHost != null ? `the instance is on ${limits.instanceHost}` : "the request names other hosts", change: `${host.hostname} among the hosts the request allows` };
    case "STALE_AGENT":
      return { rule, message: `the agent on ${host.hostname} has not reported in time`, change: "the host's agent reporting again" };
    case "TOPOLOGY":
      return { rule, message: "each group has a provider, but none share the topology the groups must match (accel:match)", change: "devices sharing that NUMA node, PCIe root or switch, or link domain, free together" };
  }
  for (const g of groups) {
    if (g.providers.some((p) => p.ruledOut === null)) continue;
    const closest = g.providers.map((p) => p.ruledOut!).sort((a, b) => RULES.indexOf(b.rule) - RULES.indexOf(a.rule))[0];
    if (!closest) return { rule, message: `${host.hostname} has no accelerator providers (group ${g.group})`, change: "a device of the class the group asks for on the host" };
    return { ...closest, message: `group ${g.group}: no provider fits; the closest: ${closest.message}` };
  }
  return { rule, message: "each group has a provider, but not enough free handles for all groups together", change: "more free handles on the host" };
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
export function shortExplanation(e: Explanation): { hosts: number; fitting: number; byRule: { rule: Rule; hosts: number }[]; closest: { hostname: string; rule: Rule; message: string; change: string } | null } {
  const c = e.detail.find((d) => d.ruledOut !== null);
  return { hosts: e.hosts, fitting: e.fitting, byRule: e.byRule.map(({ rule, hosts }) => ({ rule, hosts })), closest: c ? { hostname: c.hostname, ...c.ruledOut! } : null };
}

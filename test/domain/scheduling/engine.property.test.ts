import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  allowedBy,
  chooseOnHost,
  compareChoices,
  explain,
  indexCandidates,
  place,
  requestOf,
  providerFit,
  RULES,
  type CandidateHost,
  type CandidateProvider,
  type HostChoice,
  type PlacementLimits,
  type PlacementRequest,
} from "../../../src/domain/scheduling/index.js";
import { topologyValue } from "../../../src/domain/scheduling/host-choice.js";
import { hostRuleOf } from "../../../src/domain/scheduling/explain.js";

import { tolerates } from "../../../src/domain/shared/tolerations.js";
import { arbHosts, arbRequest, provider } from "./fleet.js";

/** Every rule, checked from scratch: the choice is on an allowed, live host, each group on a provider that meets its alternative, handles and topology respected. */
function violations(choice: HostChoice, hosts: CandidateHost[], request: PlacementRequest, limits: PlacementLimits): string[] {
  const out: string[] = [];
  const host = hosts.find((h) => h.hostname === choice.hostname)!;
  if (host.stale) out.push("stale host");
  if (!allowedBy(limits, host.hostname)) out.push("host outside the limits");
  if (choice.assignments.length !== request.groups.length) out.push("not every group placed");
  const used = new Map<string, number>();
  const seen = new Map<string, string | number>();
  for (const a of choice.assignments) {
    const g = request.groups[a.group]!;
    const need = g.alternatives[a.alternative]!;
    const p = host.providers.find((x) => x.rpUuid === a.rpUuid);
    if (!p) {
      out.push("provider not on the host");
      continue;
    }
    if (p.resourceClass !== need.resourceClass) out.push("class");
    if (!need.required.every((t) => p.traits.has(t))) out.push("required trait");
    if (need.forbidden.some((t) => p.traits.has(t))) out.push("forbidden trait");
    if (["FAILED", "CLEANING", "QUALIFYING"].includes(p.lifecycle)) out.push("lifecycle");
    if (p.taints.some((t) => !tolerates(g.tolerations, t))) out.push("taint");
    used.set(p.rpUuid, (used.get(p.rpUuid) ?? 0) + need.amount);
    if (used.get(p.rpUuid)! > p.free) out.push("handles");
    for (const attr of g.match) {
      const v = topologyValue(p.topology, attr);
      if (v === null) out.push("unknown topology");
      else if (seen.has(attr) && seen.get(attr) !== v) out.push("topology differs");
      else seen.set(attr, v);
    }
  }
  return out;
}

/** Whether any assignment at all meets every rule on the host (exhaustive). */
function anyFits(host: CandidateHost, request: PlacementRequest, limits: PlacementLimits): boolean {
  if (!request.enabled || host.stale || !allowedBy(limits, host.hostname)) return false;
  const opts = request.groups.map((g) => g.alternatives.flatMap((_, alternative) => host.providers.map((p) => ({ alternative, p }))));
  const walk = (i: number, picked: { alternative: number; p: CandidateProvider }[]): boolean => {
    if (i === opts.length) {
      const choice: HostChoice = { hostname: host.hostname, free: 0, ready: 0, assignments: picked.map((o, group) => ({ group, alternative: o.alternative, rpUuid: o.p.rpUuid, deviceUuid: o.p.deviceUuid, resourceClass: "", amount: 0 })) };
      return violations(choice, [host], request, limits).length === 0;
    }
    return opts[i]!.some((o) => walk(i + 1, [...picked, o]));
  };
  return walk(0, []);
}

const arbLimits = fc.oneof(fc.constant<PlacementLimits>({}), fc.constantFrom<PlacementLimits>({ hosts: ["host-0", "host-2"] }, { instanceHost: "host-1" }));

describe("the placement engine (properties)", () => {
  it("a choice always satisfies every rule, and a refusal means no host admits any assignment", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, arbLimits, (hosts, request, limits) => {
        const decision = place(request, indexCandidates(hosts), limits);
        const possible = hosts.some((h) => anyFits(h, request, limits));
        if (decision.ok) {
          for (const c of decision.choices) expect(violations(c, hosts, request, limits)).toEqual([]);
          expect(possible).toBe(true);
        } else {
          expect(possible).toBe(false);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("shows the hosts closest to fitting first, then by name, and each rule's first host by name as its example", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, arbLimits, fc.integer({ min: 0, max: 4 }), (hosts, request, limits, detail) => {
        const index = indexCandidates(hosts);
        const e = explain(request, index, limits, detail);
        const rank = (h: (typeof hosts)[number]) => {
          const rule = hostRuleOf(h, request, limits);
          return rule === null ? RULES.length : RULES.indexOf(rule);
        };
        const byName = [...index.hosts].sort((a, b) => (a.hostname < b.hostname ? -1 : 1));
        const closest = [...byName].sort((a, b) => rank(b) - rank(a)).slice(0, detail);
        expect(e.detail.map((v) => v.hostname)).toEqual(closest.map((h) => h.hostname));
        for (const r of e.byRule) expect(r.example.hostname).toBe(byName.find((h) => hostRuleOf(h, request, limits) === r.rule)!.hostname);
      }),
      { numRuns: 400 },
    );
  });

  it("a refusal's reasons are right: each host's and provider's rule holds of it", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, arbLimits, (hosts, request, limits) => {
        const e = explain(request, indexCandidates(hosts), limits, 100);
        expect(e.fitting).toBe(hosts.filter((h) => anyFits(h, request, limits)).length);
        for (const v of e.detail) {
          const host = hosts.find((h) => h.hostname === v.hostname)!;
          expect(v.ruledOut === null).toBe(anyFits(host, request, limits));
          if (v.ruledOut?.rule === "PROFILE_DISABLED") expect(request.enabled).toBe(false);
          if (v.ruledOut?.rule === "HOST_LIMIT") expect(allowedBy(limits, host.hostname)).toBe(false);
          if (v.ruledOut?.rule === "STALE_AGENT") expect(host.stale).toBe(true);
          for (const g of v.groups) {
            for (const pv of g.providers) {
              const p = host.providers.find((x) => x.rpUuid === pv.rpUuid)!;
              const grp = request.groups[g.group]!;
              const fit = providerFit(p, grp.alternatives[pv.alternative]!, grp.tolerations);
              if (pv.ruledOut === null) expect(fit.ok).toBe(true);
              else {
                // Ruled out against every alternative, and for the stated rule on the one named.
                expect(grp.alternatives.every((n) => !providerFit(p, n, grp.tolerations).ok)).toBe(true);
                expect(fit.ok ? null : fit.rule).toBe(pv.ruledOut.rule);
              }
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("answers the best hosts by the ranking, as weighing every host would (the search may stop early, never wrongly)", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, fc.integer({ min: 1, max: 3 }), (hosts, request, max) => {
        const index = indexCandidates(hosts);
        const every = index.hosts.filter((h) => !h.stale).flatMap((h) => chooseOnHost(h, request) ?? []);
        const best = request.enabled ? every.sort(compareChoices).slice(0, max) : [];
        const decision = place(request, index, {}, max);
        expect(decision.ok ? decision.choices : []).toEqual(best);
      }),
      { numRuns: 1000 },
    );
  });

  it("with a spread key, answers the best hosts as weighing every host with that key would; only ties move", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, fc.integer({ min: 1, max: 3 }), fc.string({ minLength: 1, maxLength: 12 }), (hosts, request, max, key) => {
        const index = indexCandidates(hosts);
        const every = index.hosts.filter((h) => !h.stale).flatMap((h) => chooseOnHost(h, request, undefined, key) ?? []);
        const best = request.enabled ? every.sort((a, b) => compareChoices(a, b, key)).slice(0, max) : [];
        const decision = place(request, index, { spread: key }, max);
        expect(decision.ok ? decision.choices : []).toEqual(best);
        // The key changes which of equal choices comes first, never how good the first is.
        const plain = place(request, index, {}, 1);
        if (decision.ok && plain.ok) expect(compareChoices({ ...decision.choices[0]!, hostname: "" }, { ...plain.choices[0]!, hostname: "" })).toBe(0);
      }),
      { numRuns: 1000 },
    );
  });

  it("spreads equal requests over equal hosts and providers by their keys", () => {
    const hosts = Array.from({ length: 10 }, (_, h) => ({ hostname: `h${h}`, stale: false, providers: Array.from({ length: 4 }, (_, p) => provider({ rpUuid: `h${h}-p${p}` })) }));
    const index = indexCandidates(hosts);
    const request = requestOf([{ "resources:CUSTOM_GPU_A": "1" }]);
    const firsts = Array.from({ length: 40 }, (_, i) => {
      const d = place(request, index, { spread: `instance-${i}` }, 1);
      return d.ok ? d.choices[0]!.assignments[0]!.rpUuid : null;
    });
    expect(new Set(firsts.map((rp) => rp?.split("-")[0])).size).toBeGreaterThan(5);
    expect(new Set(firsts).size).toBeGreaterThan(20);
    // Without a key every request takes the same first device, as before.
    expect(new Set(Array.from({ length: 5 }, () => JSON.stringify(place(request, index, {}, 1)))).size).toBe(1);
    expect(place(request, index, { spread: "instance-1" }, 1)).toEqual(place(request, index, { spread: "instance-1" }, 1));
  });

  it("is deterministic: the order hosts and providers arrive in does not change the choice", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, (hosts, request) => {
        const reversed = [...hosts].reverse().map((h) => ({ ...h, providers: [...h.providers].reverse() }));
        expect(place(request, indexCandidates(reversed))).toEqual(place(request, indexCandidates(hosts)));
      }),
      { numRuns: 200 },
    );
  });

  it("takes the earliest alternative that fits on the chosen host", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, (hosts, request) => {
        const d = place(request, indexCandidates(hosts));
        if (!d.ok || request.groups.length !== 1) return;
        const c = d.choices[0]!;
        const host = hosts.find((h) => h.hostname === c.hostname)!;
        const g = request.groups[0]!;
        const earliest = g.alternatives.findIndex((n) => host.providers.some((p) => providerFit(p, n, g.tolerations).ok && g.match.every((a) => topologyValue(p.topology, a) !== null)));
        expect(c.assignments[0]!.alternative).toBe(earliest);
        expect(chooseOnHost(host, request)).toEqual(c);
      }),
      { numRuns: 200 },
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capacity, indexCandidates, place, type CandidateHost, type CandidateIndex } from "../../../src/domain/scheduling/index.js";
import { countByChoices, countOnHost } from "../../../src/domain/scheduling/capacity.js";
import { bound, hostsByBound } from "../../../src/domain/scheduling/bound-order.js";
import { chooseOnHost } from "../../../src/domain/scheduling/host-choice.js";
import { compareChoices } from "../../../src/domain/scheduling/place.js";
import { KeptCandidates } from "../../../src/domain/scheduling/kept-index.js";
import { arbEasyRequest, arbHosts, arbRequest } from "./fleet.js";

/** A change the read side feeds the index: a host put again (new, or what it became), or gone. */
type Change = { put: CandidateHost } | { remove: string };

const arbChanges = fc.tuple(arbHosts, arbHosts, fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 12 })).map(([first, later, picks]) => {
  // The later hosts under the same names ("host-<i>") stand for what a host became.
  const pool = [...first, ...later];
  const changes: Change[] = picks.map(([i, gone]) => (gone ? { remove: pool[i % pool.length]!.hostname } : { put: pool[i % pool.length]! }));
  return { first, changes };
});

/** What the index holds after the changes, host by host (the last put wins; a removal forgets). */
function finalHosts(first: readonly CandidateHost[], changes: readonly Change[]): CandidateHost[] {
  const byName = new Map(first.map((h) => [h.hostname, h]));
  for (const c of changes) {
    if ("put" in c) byName.set(c.put.hostname, c.put);
    else byName.delete(c.remove);
  }
  return [...byName.values()];
}

/** The free levels as a plain map (class -> host -> free), for comparing two indexes. */
function levels(index: CandidateIndex, classes: readonly string[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const rc of classes) {
    const l = index.freeOf?.(rc);
    if (!l) continue;
    const hosts: Record<string, number> = {};
    for (const level of l.descending()) for (const h of l.hostsAt(level)) hosts[h] = level;
    out[rc] = hosts;
  }
  return out;
}

describe("the candidates kept across decisions", () => {
  it("answer as an index rebuilt from scratch, whatever changes the read side fed it", () => {
    fc.assert(
      fc.property(arbChanges, arbRequest, fc.integer({ min: 1, max: 3 }), ({ first, changes }, request, max) => {
        const kept = new KeptCandidates(first);
        // Asked between changes too, so lists built before a change must not survive it.
        place(request, kept, {}, max);
        for (const c of changes) {
          if ("put" in c) kept.put(c.put);
          else kept.remove(c.remove);
        }
        const scratch = indexCandidates(finalHosts(first, changes));
        expect(kept.hosts).toEqual(scratch.hosts);
        expect([...kept.byClass.keys()].sort()).toEqual([...scratch.byClass.keys()].sort());
        for (const [rc, list] of scratch.byClass) expect(kept.byClass.get(rc)).toEqual(list);
        const classes = ["CUSTOM_GPU_A", "CUSTOM_GPU_B", "CUSTOM_NIC"];
        expect(levels(kept, classes)).toEqual(levels(scratch, classes));
        expect(place(request, kept, {}, max)).toEqual(place(request, scratch, {}, max));
        expect(capacity(request, kept)).toEqual(capacity(request, scratch));
      }),
      { numRuns: 500 },
    );
  });

  it("a decision within a host limit answers what weighing every named host answers, whatever changes the read side fed it", () => {
    const arbNamed = fc.array(fc.constantFrom<string>("host-0", "host-1", "host-2", "host-3", "host-4", "host-9"), { maxLength: 7 });
    fc.assert(
      fc.property(arbChanges, fc.oneof(arbRequest, arbEasyRequest), arbNamed, fc.integer({ min: 1, max: 2 }), ({ first, changes }, request, named, max) => {
        const kept = new KeptCandidates(first);
        place(request, kept, { hosts: named }, max);
        for (const c of changes) {
          if ("put" in c) kept.put(c.put);
          else kept.remove(c.remove);
        }
        // Weighed host by host from what the index should hold: the named hosts, each once.
        const hosts = indexCandidates(finalHosts(first, changes)).hosts.filter((h) => named.includes(h.hostname) && !h.stale);
        const every = hosts.flatMap((h) => chooseOnHost(h, request) ?? []);
        const best = request.enabled ? every.sort(compareChoices).slice(0, max) : [];
        const decision = place(request, kept, { hosts: named }, max);
        expect(decision.ok ? decision.choices : []).toEqual(best);
      }),
      { numRuns: 500 },
    );
  });

  it("a decision from the free levels answers what weighing every host answers", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, fc.integer({ min: 1, max: 3 }), (hosts, request, max) => {
        const kept = new KeptCandidates(hosts);
        // The same hosts without the levels: every host's bound worked out.
        const plain: CandidateIndex = { hosts: kept.hosts, byName: kept.byName, byClass: kept.byClass };
        expect(place(request, kept, {}, max)).toEqual(place(request, plain, {}, max));
        expect(capacity(request, kept)).toEqual(capacity(request, plain));
      }),
      { numRuns: 1000 },
    );
  });

  it("reaches the hosts from the free levels largest bound first, and every host a request could fit on", () => {
    fc.assert(
      fc.property(arbChanges, arbRequest, ({ first, changes }, request) => {
        const kept = new KeptCandidates(first);
        for (const c of changes) {
          if ("put" in c) kept.put(c.put);
          else kept.remove(c.remove);
        }
        const reached = [...hostsByBound(kept, request, {})];
        for (const r of reached) expect(r.bound).toBe(bound(r.host, request));
        for (let i = 1; i < reached.length; i++) expect(reached[i]!.bound).toBeLessThanOrEqual(reached[i - 1]!.bound);
        const worth = kept.hosts.filter((h) => !h.stale && bound(h, request) > 0).map((h) => h.hostname);
        expect(reached.map((r) => r.host.hostname).sort()).toEqual(worth);
      }),
      { numRuns: 1000 },
    );
  });

  it("counts one group provider by provider as making the choice again and again would", () => {
    fc.assert(
      fc.property(arbHosts, arbRequest, (hosts, request) => {
        const one = { ...request, groups: request.groups.slice(0, 1) };
        for (const h of hosts) expect(countOnHost(h, one)).toBe(countByChoices(h, one));
      }),
      { numRuns: 1000 },
    );
  });

  it("asks whether a host is stale when it reaches it: a host gone stale since it was put takes nothing", () => {
    const kept = new KeptCandidates([
      { hostname: "a", stale: false, providers: [{ rpUuid: "a-0", deviceUuid: "d-a", resourceClass: "CUSTOM_GPU_A", traits: new Set(), free: 2, taints: [], lifecycle: "AVAILABLE", topology: null }] },
      { hostname: "b", stale: false, providers: [{ rpUuid: "b-0", deviceUuid: "d-b", resourceClass: "CUSTOM_GPU_A", traits: new Set(), free: 1, taints: [], lifecycle: "AVAILABLE", topology: null }] },
    ]);
    const request = { enabled: true, groups: [{ alternatives: [{ resourceClass: "CUSTOM_GPU_A", amount: 1, required: [], forbidden: [] }], tolerations: [], match: [], functionId: null, bitstreamId: null, byName: false }] };
    const stale = (h: string) => h === "a";
    const d = place(request, kept, { stale });
    expect(d.ok && d.choices.map((c) => c.hostname)).toEqual(["b"]);
    expect(capacity(request, kept, { stale })).toEqual({ total: 1, hosts: [{ hostname: "b", count: 1 }] });
  });
});

/** Small fleets and requests for the placement engine's tests. */
import fc from "fast-check";
import type { CandidateHost, CandidateProvider, GroupRequest, Need, PlacementRequest } from "../../../src/domain/scheduling/index.js";

export const CLASSES = ["CUSTOM_GPU_A", "CUSTOM_GPU_B", "CUSTOM_NIC"] as const;
export const TRAITS = ["CUSTOM_T1", "CUSTOM_T2"] as const;

export function provider(over: Partial<CandidateProvider> & { rpUuid: string }): CandidateProvider {
  return {
    deviceUuid: `dev-${over.rpUuid}`,
    resourceClass: "CUSTOM_GPU_A",
    traits: new Set(),
    free: 1,
    taints: [],
    lifecycle: "AVAILABLE",
    topology: null,
    ...over,
  };
}

export function need(resourceClass: string, amount = 1, required: string[] = [], forbidden: string[] = []): Need {
  return { resourceClass, amount, required, forbidden };
}

export function group(alternatives: Need[], over: Partial<GroupRequest> = {}): GroupRequest {
  return { alternatives, tolerations: [], match: [], functionId: null, bitstreamId: null, byName: false, ...over };
}

const arbTopology = fc.option(
  fc.record({ numaNode: fc.option(fc.integer({ min: 0, max: 1 })), pcieRoot: fc.constant(null), pcieSwitch: fc.option(fc.constantFrom("sw0", "sw1")), linkDomain: fc.option(fc.constantFrom("nv0")) }),
);

const arbProvider = fc.record({
  resourceClass: fc.constantFrom(...CLASSES),
  traits: fc.subarray([...TRAITS]),
  free: fc.integer({ min: 0, max: 3 }),
  tainted: fc.constantFrom(false, false, false, true),
  lifecycle: fc.constantFrom("AVAILABLE", "AVAILABLE", "AVAILABLE", "FAILED", "CLEANING"),
  topology: arbTopology,
});

export const arbHosts = fc
  .array(fc.record({ stale: fc.constantFrom(false, false, false, true), providers: fc.array(arbProvider, { maxLength: 4 }) }), { minLength: 1, maxLength: 5 })
  .map((hosts): CandidateHost[] =>
    hosts.map((h, i) => ({
      hostname: `host-${i}`,
      stale: h.stale,
      providers: h.providers.map((p, j) =>
        provider({
          rpUuid: `rp-${i}-${j}`,
          resourceClass: p.resourceClass,
          traits: new Set(p.traits),
          free: p.free,
          taints: p.tainted ? [{ key: "example.com/burn-in", value: "", effect: "NoSchedule" as const }] : [],
          lifecycle: p.lifecycle,
          topology: p.topology,
        }),
      ),
    })),
  );

const arbNeed = fc.record({
  resourceClass: fc.constantFrom(...CLASSES),
  amount: fc.integer({ min: 1, max: 2 }),
  required: fc.subarray([...TRAITS], { maxLength: 1 }),
  forbidden: fc.subarray([...TRAITS], { maxLength: 1 }),
});

export const arbRequest = fc
  .record({
    groups: fc.array(
      fc.record({
        alternatives: fc.array(arbNeed, { minLength: 1, maxLength: 3 }),
        tolerates: fc.boolean(),
        match: fc.subarray(["numa_node", "pcie_switch"] as const),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    enabled: fc.constantFrom(true, true, true, false),
  })
  .map(
    (r): PlacementRequest => ({
      enabled: r.enabled,
      groups: r.groups.map((g) => group(g.alternatives, { match: g.match, tolerations: g.tolerates ? [{ key: "example.com/burn-in", value: null, effect: null }] : [] })),
    }),
  );

/** Requests most fleets can meet somewhere (one handle of a class per group, no traits): decisions with several fitting hosts to rank. */
export const arbEasyRequest = fc
  .array(fc.record({ resourceClass: fc.constantFrom(...CLASSES), match: fc.subarray(["numa_node"] as const) }), { minLength: 1, maxLength: 2 })
  .map((groups): PlacementRequest => ({ enabled: true, groups: groups.map((g) => group([need(g.resourceClass)], { match: g.match })) }));

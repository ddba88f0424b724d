import { describe, expect, it } from "vitest";
import { capacity, explain, indexCandidates, KeptCandidates, place, requestOf, shortExplanation, withoutCandidates, type CandidateHost } from "../../../src/domain/scheduling/index.js";
import { provider } from "./fleet.js";

const topo = (numaNode: number, linkDomain: string | null = null) => ({ numaNode, pcieRoot: null, pcieSwitch: null, linkDomain });

const hosts: CandidateHost[] = [
  {
    hostname: "a",
    stale: false,
    providers: [
      provider({ rpUuid: "a-gpu0", resourceClass: "CUSTOM_GPU_T4", topology: topo(0) }),
      provider({ rpUuid: "a-gpu1", resourceClass: "CUSTOM_GPU_T4", topology: topo(1) }),
      provider({ rpUuid: "a-nic", resourceClass: "CUSTOM_NIC", topology: topo(1) }),
    ],
  },
  {
    hostname: "b",
    stale: false,
    providers: [
      provider({ rpUuid: "b-l40s", resourceClass: "CUSTOM_GPU_L40S", topology: topo(0) }),
      provider({ rpUuid: "b-nic", resourceClass: "CUSTOM_NIC", topology: topo(1) }),
    ],
  },
];

describe("the placement engine", () => {
  it("takes a group's first alternative that fits, and records which", () => {
    const request = requestOf([{ "resources:CUSTOM_MIG_3G_40GB": "1", "accel:alternatives": "resources:CUSTOM_GPU_L40S=1;resources:CUSTOM_GPU_T4=1" }]);
    const d = place(request, indexCandidates(hosts));
    expect(d.ok && d.choices.map((c) => [c.hostname, c.assignments[0]!.alternative, c.assignments[0]!.rpUuid])).toEqual([
      ["b", 1, "b-l40s"],
      ["a", 2, "a-gpu0"],
    ]);
  });

  it("puts groups that match numa_node on devices of one NUMA node", () => {
    const request = requestOf([
      { "resources:CUSTOM_GPU_T4": "1", "accel:match": "numa_node" },
      { "resources:CUSTOM_NIC": "1", "accel:match": "numa_node" },
    ]);
    const d = place(request, indexCandidates(hosts));
    expect(d.ok && d.choices[0]!.assignments.map((a) => a.rpUuid)).toEqual(["a-gpu1", "a-nic"]);
  });

  it("explains a refusal: the topology, per host, and what would change", () => {
    const request = requestOf([
      { "resources:CUSTOM_GPU_L40S": "1", "accel:match": "numa_node" },
      { "resources:CUSTOM_NIC": "1", "accel:match": "numa_node" },
    ]);
    const d = place(request, indexCandidates(hosts));
    expect(d.ok).toBe(false);
    if (d.ok) return;
    expect(d.explanation.byRule).toMatchObject([
      { rule: "RESOURCE_CLASS", hosts: 1, example: { hostname: "a", change: "a provider offering CUSTOM_GPU_L40S" } },
      { rule: "TOPOLOGY", hosts: 1, example: { hostname: "b", message: expect.stringContaining("accel:match") } },
    ]);
    expect(shortExplanation(d.explanation).byRule).toEqual([
      { rule: "RESOURCE_CLASS", hosts: 1 },
      { rule: "TOPOLOGY", hosts: 1 },
    ]);
    expect(d.explanation.detail[0]).toMatchObject({ hostname: "b", ruledOut: { rule: "TOPOLOGY" } });
    expect(d.explanation.detail[1]!.groups[0]!.providers[0]!.ruledOut).toMatchObject({ rule: "RESOURCE_CLASS", change: "a provider offering CUSTOM_GPU_L40S" });
  });

  it("names the taint and the toleration that would admit it", () => {
    const tainted: CandidateHost[] = [{ hostname: "t", stale: false, providers: [provider({ rpUuid: "t0", resourceClass: "CUSTOM_GPU_T4", taints: [{ key: "example.com/burn-in", value: "", effect: "NoSchedule" }] })] }];
    const e = explain(requestOf([{ "resources:CUSTOM_GPU_T4": "1" }]), indexCandidates(tainted));
    expect(e.detail[0]!.ruledOut).toMatchObject({ rule: "TAINT", change: expect.stringContaining("accel:tolerations=example.com/burn-in:NoSchedule") });
    expect(place(requestOf([{ "resources:CUSTOM_GPU_T4": "1", "accel:tolerations": "example.com/burn-in" }]), indexCandidates(tainted)).ok).toBe(true);
  });

  it("counts what a group draws from a device's capacities: a VF with its bandwidth goes where both are free", () => {
    const bw = (free: number) => new Map([["NET_BW_EGR_KILOBIT_PER_SEC", free]]);
    const nics: CandidateHost[] = [
      { hostname: "n1", stale: false, providers: [provider({ rpUuid: "n1-pf", resourceClass: "SRIOV_NET_VF", free: 8, capacityFree: bw(500_000) })] },
      { hostname: "n2", stale: false, providers: [provider({ rpUuid: "n2-pf", resourceClass: "SRIOV_NET_VF", free: 2, capacityFree: bw(10_000_000) })] },
      { hostname: "n3", stale: false, providers: [provider({ rpUuid: "n3-pf", resourceClass: "SRIOV_NET_VF", free: 8 })] },
    ];
    const group = { "resources:SRIOV_NET_VF": "1", "resources:NET_BW_EGR_KILOBIT_PER_SEC": "1000000" };
    const d = place(requestOf([group]), indexCandidates(nics));
    expect(d.ok && d.choices.map((c) => c.assignments[0]!.rpUuid)).toEqual(["n2-pf"]);
    // Two VFs of 1 Gbit/s fit on n2's 10; the bandwidth, not the VFs, bounds n1.
    expect(capacity(requestOf([group]), indexCandidates(nics)).total).toBe(2);
    const e = explain(requestOf([{ ...group, "resources:NET_BW_EGR_KILOBIT_PER_SEC": "20000000" }]), indexCandidates(nics));
    const byHost = new Map(e.detail.map((h) => [h.hostname, h.groups[0]!.providers[0]!.ruledOut]));
    expect(byHost.get("n2")).toMatchObject({ rule: "CAPACITY", message: "its device has 10000000 NET_BW_EGR_KILOBIT_PER_SEC free, the group draws 20000000" });
    expect(byHost.get("n3")).toMatchObject({ rule: "CAPACITY", change: "a device that reports NET_BW_EGR_KILOBIT_PER_SEC as a capacity" });
  });

  it("counts capacity per host and in total, and what is left without some hosts or devices", () => {
    const many: CandidateHost[] = [
      { hostname: "x", stale: false, providers: [provider({ rpUuid: "x0", free: 3 }), provider({ rpUuid: "x1", free: 2 })] },
      { hostname: "y", stale: false, providers: [provider({ rpUuid: "y0", free: 1 })] },
      { hostname: "z", stale: true, providers: [provider({ rpUuid: "z0", free: 4 })] },
    ];
    const request = requestOf([{ "resources:CUSTOM_GPU_A": "2" }]);
    const index = indexCandidates(many);
    expect(capacity(request, index)).toEqual({ total: 2, hosts: [{ hostname: "x", count: 2 }] });
    expect(capacity(requestOf([{ "resources:CUSTOM_GPU_A": "1" }]), index).total).toBe(6);
    expect(capacity(requestOf([{ "resources:CUSTOM_GPU_A": "1" }]), withoutCandidates(index, { hosts: ["y"], devices: ["dev-x1"] })).total).toBe(3);
    expect(capacity(requestOf([{ "resources:CUSTOM_GPU_A": "1" }], false), index).total).toBe(0);
  });

  it("keeps to the instance's host", () => {
    const request = requestOf([{ "resources:CUSTOM_NIC": "1" }]);
    const d = place(request, indexCandidates(hosts), { instanceHost: "a" });
    expect(d.ok && d.choices.map((c) => c.hostname)).toEqual(["a"]);
    const e = explain(request, indexCandidates(hosts), { instanceHost: "a" });
    expect(e.byRule).toEqual([{ rule: "HOST_LIMIT", hosts: 1, example: { hostname: "b", message: "the instance is on a", change: "b among the hosts the request allows" } }]);
  });

  it("weighs a host whose bound is above the kept choice's ready handles, whatever the tie-break says", () => {
    // "a" could give 4 (2 of them tainted), so it is reached first and kept with 2 ready; "b" gives 3
    // and must win on ready handles even though its name comes after "a"'s. Many equal hosts follow.
    const taint = [{ key: "maintenance", value: "", effect: "NoSchedule" as const }];
    const fleet: CandidateHost[] = [
      { hostname: "a", stale: false, providers: [provider({ rpUuid: "a-0", free: 2 }), provider({ rpUuid: "a-1", free: 2, taints: taint })] },
      { hostname: "b", stale: false, providers: [provider({ rpUuid: "b-0", free: 3 })] },
      ...Array.from({ length: 20 }, (_, i): CandidateHost => ({ hostname: `c${i}`, stale: false, providers: [provider({ rpUuid: `c${i}-0`, free: 2 })] })),
    ];
    const request = requestOf([{ "resources:CUSTOM_GPU_A": "1" }]);
    const kept = new KeptCandidates(fleet);
    for (const index of [kept, indexCandidates(fleet)]) {
      const d = place(request, index, {}, 1);
      expect(d.ok && d.choices.map((c) => [c.hostname, c.ready])).toEqual([["b", 3]]);
      const three = place(request, index, {}, 3);
      // Among the hosts ranked equal (2 ready, 2 free), names decide: "a" before "c0" and "c1".
      expect(three.ok && three.choices.map((c) => c.hostname)).toEqual(["b", "a", "c0"]);
    }
  });
});

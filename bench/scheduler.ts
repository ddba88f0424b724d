/**
 * The placement engine's figures on a simulated fleet, fed to it as the read side does: the
 * candidates kept across decisions (src/domain/scheduling/kept-index.ts), each host put again once
 * it changed (here: after each decision, the chosen host with the handles its choice took, as the
 * read models show a bind).
 *
 * - decision_p99_ms: a two-group profile (a GPU and a NIC sharing a NUMA node) placed, and the
 *   host it chose put again into the index with what the choice took.
 * - explain_p99_ms: a request no device meets, explained over the whole fleet.
 * - capacity_p99_ms: how many more one-GPU requests fit, over the whole fleet.
 * - whatif_p99_ms: the same with 500 hosts left out (the index rebuilt without them included).
 *
 * HOSTS hosts x 8 devices: GPU hosts (6 GPUs on two NUMA nodes and NVLink domains, 2 NICs), FPGA
 * hosts (6 FPGAs, 2 NICs) and mixed hosts; some devices used, tainted or cleaning.
 *
 * Decisions are timed after `--warmup` unmeasured ones: the engine's code compiled, the index's
 * bounds for the profile's shape kept (the first decision for a shape reads the fleet once, and
 * `first_decision_ms` reports it), and the fleet's objects, built just before, moved into V8's
 * old generation (over the first few hundred decisions the young collections that move them take
 * 2-14 ms each, where a service's index has long been there).
 *
 *   npm run bench:scheduler
 *   npm run bench:scheduler -- --hosts 10000 --rounds 1000 --warmup 1000
 */
import { capacity, explain, KeptCandidates, place, requestOf, withoutCandidates, type CandidateHost, type CandidateProvider, type HostChoice } from "../src/domain/scheduling/index.js";
import { parseArgs } from "./lib/client.js";

const args = parseArgs(process.argv.slice(2));
const HOSTS = Number(args.hosts ?? 10_000);
const ROUNDS = Number(args.rounds ?? 1000);
const WARMUP = Number(args.warmup ?? 1000);
/** Rounds of explain, capacity and what-if (each reads the whole fleet). */
const SWEEPS = 50;

/** A deterministic pseudo-random sequence, so runs compare. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function fleet(n: number): CandidateHost[] {
  const r = rng(42);
  const hosts: CandidateHost[] = [];
  for (let h = 0; h < n; h++) {
    const hostname = `compute-${String(h).padStart(5, "0")}`;
    const kind = h % 4 === 0 ? "fpga" : h % 4 === 1 ? "mixed" : "gpu";
    const providers: CandidateProvider[] = [];
    for (let d = 0; d < 8; d++) {
      const numaNode = d % 2;
      const cls = d >= 6 ? "CUSTOM_NIC_CX7" : kind === "fpga" || (kind === "mixed" && d >= 3) ? "CUSTOM_FPGA_AGILEX" : h % 3 === 0 ? "CUSTOM_GPU_L40S" : "CUSTOM_GPU_A100";
      const roll = r();
      providers.push({
        rpUuid: `${hostname}-rp${d}`,
        deviceUuid: `${hostname}-dev${d}`,
        resourceClass: cls,
        traits: new Set(cls === "CUSTOM_NIC_CX7" ? ["CUSTOM_NIC_RDMA"] : cls === "CUSTOM_FPGA_AGILEX" ? ["CUSTOM_FPGA_INTEL"] : ["CUSTOM_GPU_NVIDIA"]),
        free: roll < 0.4 ? 0 : cls === "CUSTOM_NIC_CX7" ? 4 : 1,
        taints: roll > 0.97 ? [{ key: "cyborg.openstack.org/maintenance", value: "", effect: "NoSchedule" }] : [],
        lifecycle: roll > 0.95 && roll <= 0.97 ? "CLEANING" : "AVAILABLE",
        topology: { numaNode, pcieRoot: `0000:${numaNode ? "80" : "00"}:01.0`, pcieSwitch: `sw${d >> 1}`, linkDomain: cls.startsWith("CUSTOM_GPU") ? `nv${numaNode}` : null },
      });
    }
    hosts.push({ hostname, stale: r() < 0.005, providers });
  }
  return hosts;
}

function p99(samples: number[]): number {
  const s = [...samples].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)]!.toFixed(3));
}

function p50(samples: number[]): number {
  const s = [...samples].sort((a, b) => a - b);
  return Number(s[Math.floor(s.length / 2)]!.toFixed(3));
}

function time(rounds: number, fn: (i: number) => unknown): number[] {
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = process.hrtime.bigint();
    fn(i);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

const hosts = fleet(HOSTS);
const index = new KeptCandidates(hosts);

/** The host as the read models show it once the choice is bound: its providers with the handles the choice took. */
function bound(choice: HostChoice): CandidateHost {
  const host = index.byName.get(choice.hostname)!;
  const took = new Map<string, number>();
  for (const a of choice.assignments) took.set(a.rpUuid, (took.get(a.rpUuid) ?? 0) + a.amount);
  return { ...host, providers: host.providers.map((p) => (took.has(p.rpUuid) ? { ...p, free: p.free - took.get(p.rpUuid)! } : p)) };
}
const twoGroups = requestOf([
  { "resources:CUSTOM_GPU_A100": "1", "trait:CUSTOM_GPU_NVIDIA": "required", "accel:match": "numa_node" },
  { "resources:CUSTOM_NIC_CX7": "1", "accel:match": "numa_node" },
]);
const impossible = requestOf([{ "resources:CUSTOM_GPU_A100": "1", "trait:CUSTOM_GPU_H100_NVL": "required" }]);
const oneGpu = requestOf([{ "resources:CUSTOM_GPU_A100": "1", "accel:alternatives": "resources:CUSTOM_GPU_L40S=1" }]);

// Decisions limited to a few hundred hosts, as a caller's host list (and unlimited, every tenth).
const decided = time(WARMUP + ROUNDS, (i) => {
  const d = place(twoGroups, index, i % 10 === 0 ? {} : { hosts: hosts.slice((i * 37) % (HOSTS - 300), ((i * 37) % (HOSTS - 300)) + 300).map((h) => h.hostname) });
  if (!d.ok) throw new Error("the two-group profile found no host");
  index.put(bound(d.choices[0]!));
});
const firstDecisionMs = decided[0]!;
const decision = decided.slice(WARMUP);
const explainMs = time(SWEEPS, () => {
  if (explain(impossible, index).fitting !== 0) throw new Error("the impossible request fits");
});
let total = 0;
const capacityMs = time(SWEEPS, () => (total = capacity(oneGpu, index).total));
const out = hosts.slice(0, 500).map((h) => h.hostname);
let whatIfTotal = 0;
const whatIfMs = time(SWEEPS, () => (whatIfTotal = capacity(oneGpu, withoutCandidates(index, { hosts: out })).total));

const result = {
  hosts: HOSTS,
  providers: HOSTS * 8,
  decision_p99_ms: p99(decision),
  // The medians say what a loaded machine does to the p99s (a busy machine's pauses land in the tail).
  decision_p50_ms: p50(decision),
  decisions: decision.length,
  first_decision_ms: Number(firstDecisionMs.toFixed(3)),
  explain_p99_ms: p99(explainMs),
  capacity_p99_ms: p99(capacityMs),
  capacity_p50_ms: p50(capacityMs),
  whatif_p99_ms: p99(whatIfMs),
  capacity_total: total,
  whatif_total: whatIfTotal,
};
for (const [k, v] of Object.entries(result)) console.log(`${k}: ${v}`);
console.log(`BENCH ${JSON.stringify(result)}`);

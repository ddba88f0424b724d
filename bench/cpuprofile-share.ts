/**
 * The share of a process's busy CPU time spent in given code, from a `node --cpu-prof` profile:
 * self time of the functions whose script URL matches, against all samples that are not idle.
 * Unlike throughput, a share measured inside one process hardly moves when other work loads the
 * machine. bench/RESULTS.md (observability) uses it on the server under bench:api:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof dist/src/cli/index.js serve   # then bench:api --url ..., then SIGTERM
 *   node dist/bench/cpuprofile-share.js /tmp/prof
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  timeDeltas: number[];
}

const GROUPS: Record<string, RegExp> = {
  "prom-client": /\/prom-client\//,
  "src/observability": /\/observability\//,
  "@opentelemetry": /\/@opentelemetry\//,
  "node async hooks (AsyncLocalStorage)": /async_hooks|async_local_storage/,
};

const dir = process.argv[2];
if (!dir) throw new Error("usage: cpuprofile-share DIR (a --cpu-prof-dir)");
for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
  const p = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  let total = 0;
  let idle = 0;
  const sums = Object.fromEntries(Object.keys(GROUPS).map((k) => [k, 0]));
  for (const [id, t] of self) {
    total += t;
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") idle += t;
    else for (const [k, re] of Object.entries(GROUPS)) if (re.test(frame.url)) sums[k]! += t;
  }
  const busy = total - idle;
  console.log(`${file}: busy ${(busy / 1e6).toFixed(1)} s of ${(total / 1e6).toFixed(1)} s`);
  for (const [k, v] of Object.entries(sums)) console.log(`  ${k}: ${((v / busy) * 100).toFixed(2)}% (${(v / 1e3).toFixed(0)} ms)`);
}

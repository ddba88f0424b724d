/**
 * One /metrics scrape's own work at a fleet's size: `Metrics.scrape` from a fleet already read
 * (the per-host families, devices per state, the text), with a set number of hosts replaced
 * between scrapes as binds and reports replace them in the service's host-feed. Besides each
 * scrape's time, the longest the event loop was held during the later scrapes (what a request
 * arriving meanwhile would wait).
 *
 *   npm run bench:scrape
 *   npm run bench:scrape -- --hosts 3000 --changed 100 --scrapes 10
 * Ends with `BENCH {json}`.
 */
import { Metrics } from "../src/observability/metrics.js";
import type { DeviceLifecycleState } from "../src/domain/inventory/device-lifecycle.js";
import { parseArgs, percentile } from "./lib/client.js";

const args = parseArgs(process.argv.slice(2));
const hosts = Number(args.hosts ?? 10_000);
const changed = Number(args.changed ?? 300);
const scrapes = Number(args.scrapes ?? 8);
/** The classes and devices of bench:fleet's hosts (test/fixtures/mixed-host). */
const CLASSES = ["PGPU", "FPGA", "QAT", "CUSTOM_NIC"];
const DEVICES = 8;

type Host = { hostname: string; capacity: Array<{ hostname: string; resourceClass: string; total: number; used: number; reserved: number }>; devices: Array<{ deviceUuid: string; state: DeviceLifecycleState }> };

const hostOf = (i: number, used: number): Host => {
  const hostname = `fleet-${String(i).padStart(5, "0")}`;
  return {
    hostname,
    capacity: CLASSES.map((resourceClass) => ({ hostname, resourceClass, total: 3, used, reserved: 0 })),
    devices: Array.from({ length: DEVICES }, (_, d) => ({ deviceUuid: `00000000-0000-4000-8000-${String(i * DEVICES + d).padStart(12, "0")}`, state: "AVAILABLE" as const })),
  };
};

/** The longest time between two ticks of a 1 ms timer, from now until stop(). */
function loopGaps(): { stop(): number } {
  let last = performance.now();
  let max = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 1);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(max, performance.now() - last);
    },
  };
}

async function main() {
  const fleet = Array.from({ length: hosts }, (_, i) => hostOf(i, 0));
  const metrics = new Metrics({ processMetrics: false });
  metrics.watch({ fleet: async () => fleet, agent: () => ({ live: true, silentForS: 12 }) });
  const times: number[] = [];
  const held: number[] = [];
  let bytes = 0;
  for (let n = 0; n < scrapes; n++) {
    if (n > 0) for (let k = 0; k < changed; k++) fleet[(n * changed + k) % hosts] = hostOf((n * changed + k) % hosts, n % 3);
    const gaps = loopGaps();
    await new Promise((r) => setTimeout(r, 10));
    const t = performance.now();
    bytes = (await metrics.scrape()).chunks.reduce((n, c) => n + c.length, 0);
    times.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 5));
    held.push(gaps.stop());
    console.log(`scrape ${n + 1}: ${times[n]!.toFixed(1)} ms, the event loop held at most ${held[n]!.toFixed(1)} ms${n === 0 ? " (the first: every host's lines written)" : `, ${changed} hosts replaced`}`);
  }
  const later = times.slice(1).sort((a, b) => a - b);
  console.log(`BENCH ${JSON.stringify({ hosts, changed, scrapes, first_ms: +times[0]!.toFixed(1), p50_ms: +percentile(later, 50).toFixed(1), max_ms: +Math.max(...later).toFixed(1), held_max_ms: +Math.max(...held.slice(1)).toFixed(1), text_mb: +(bytes / 1e6).toFixed(1) })}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

/**
 * A fleet of realistic size: N hosts of 8 devices each (GPUs, FPGAs, a QAT card and a NIC, as the
 * agent's drivers discover them on test/fixtures/mixed-host) report every interval with jitter
 * through the agent's report protocol, each with its own agent token, while 1% of hosts per
 * interval change (a device removed or added back, going unhealthy or recovering) and a boot storm
 * creates, binds, waits for bound and deletes ARQs on the same hosts.
 *
 *   npm run bench:fleet
 *   npm run bench:fleet -- --hosts 500 --minutes 1 --interval-s 60 --boots-per-s 5
 *   npm run bench:fleet -- --url http://host:4000/graphql --token SERVICE --admin-token ADMIN --agent-tokens tokens.json
 * Options: --hosts 10000 --minutes 10 --interval-s 60 --register-s <interval> --warmup-s <register-s>
 *          --jitter 0.1 --churn 0.01
 *          --boots-per-s 5 --connections 8 --seed N --env KEY=VALUE,... (more settings for the embedded server)
 *          --preregister (the embedded log starts with every host's first report written, as the
 *          service writes it: the run measures a registered fleet after a restart, not registration)
 *          --restart-first (the embedded server is restarted once, from its snapshots, before the
 *          fleet starts: a service restarted since its first start, not one that replayed its log)
 *          --scrape-s 15 (/metrics read every so many seconds from the start, as a Prometheus
 *          would; 0: never)
 *          --storm-in-process (the boot storm in this process, beside the agents, instead of a
 *          thread of its own: their stalls are then counted in the binds' latency)
 *
 * The hosts' first reports (whole ones: registration) are spread over `--register-s`; the warm-up
 * lasts until `--warmup-s`, then the boot storm starts (on registered hosts) and `--minutes` are
 * measured. The embedded server is started in its own process (the hosts'
 * agent tokens in its token file) and restarted at the end (restart time). Against --url, the
 * agent tokens come from a token file (those with the agent role and a hostname), the server's
 * memory and CPU are read when `--pid` names its process on this machine, and restart time is not
 * measured. Ends with `BENCH {json}`.
 */
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { BenchClient, parseArgs, percentile } from "./lib/client.js";
import { BENCH_TOKENS, startBenchServer, type BenchToken } from "./lib/embedded-server.js";
import { Fleet, httpPoster, type ReportSample } from "./lib/fleet/agents.js";
import { devicesFor, SimulatedHost, templateDevices } from "./lib/fleet/host-devices.js";
import { preregister } from "./lib/fleet/preregister.js";
import { RssSampler, residentMiB, rssMiB } from "./lib/fleet/rss.js";
import { Scraper } from "./lib/fleet/scraper.js";
import { bindStages } from "./lib/fleet/server-histograms.js";
import { BootStorm, STORM_PROFILE } from "./lib/fleet/storm.js";
import { StormThread } from "./lib/fleet/storm-thread.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { processCpuSeconds } from "./lib/process-cpu.js";
import { seededRandom } from "./lib/seeded-random.js";

const args = parseArgs(process.argv.slice(2));
const hostsWanted = Number(args.hosts ?? 10_000);
const minutes = Number(args.minutes ?? 10);
const intervalS = Number(args["interval-s"] ?? 60);
const registerS = Number(args["register-s"] ?? intervalS);
const warmupS = Number(args["warmup-s"] ?? Math.max(intervalS, registerS));
const seed = Number(args.seed ?? Math.floor(Math.random() * 2 ** 31));
const random = seededRandom(seed);
const log = (line: string) => console.log(`[fleet ${new Date().toISOString().slice(11, 19)}] ${line}`);

function agentTokens(): BenchToken[] {
  if (args["agent-tokens"]) {
    const file = JSON.parse(readFileSync(args["agent-tokens"], "utf8")) as { tokens: BenchToken[] };
    return file.tokens.filter((t) => t.roles.includes("agent") && t.hostname).slice(0, hostsWanted);
  }
  const pad = String(hostsWanted - 1).length;
  return Array.from({ length: hostsWanted }, (_, i) => {
    const hostname = `fleet-${String(i).padStart(pad, "0")}`;
    return { name: `agent-${hostname}`, token: `fleet-agent-token-${hostname}-${seed}`, roles: ["agent"], hostname };
  });
}

function serverEnv(): Record<string, string> {
  return Object.fromEntries((args.env ?? "").split(",").filter(Boolean).map((kv) => kv.split("=", 2) as [string, string]));
}

const p = (xs: number[], q: number) => +percentile([...xs].sort((a, b) => a - b), q).toFixed(1);
/** The samples' latencies in each whole minute from `from` to `end` (a last, partial minute is left out). */
function byMinute(samples: ReadonlyArray<{ at: number; ms: number }>, from: number, end: number): number[][] {
  const minutes: number[][] = [];
  for (let m = 0; from + (m + 1) * 60_000 <= end; m++) minutes.push(samples.filter((x) => x.at >= from + m * 60_000 && x.at < from + (m + 1) * 60_000).map((x) => x.ms));
  return minutes;
}
const dirMiB = (dir: string) => Math.round(Number(execFileSync("du", ["-sk", dir], { encoding: "utf8" }).split("\t")[0]) / 1024);

async function readModelSize(url: string, adminToken: string) {
  const admin = new BenchClient(url, adminToken);
  try {
    const d = await admin.gql(`{ devices(first: 1) { totalCount } acceleratorRequests(first: 1) { totalCount } }`);
    return { devices: d.devices.totalCount as number, arqs: d.acceleratorRequests.totalCount as number };
  } finally {
    await admin.close();
  }
}

async function main() {
  const speed = machineSpeedMs();
  const tokens = agentTokens();
  const template = await templateDevices();
  const hosts = tokens.map((t) => new SimulatedHost(t.hostname!, t.token, devicesFor(template, t.hostname!)));
  let preregistered = null as { events: number; s: number } | null;
  const prepare = async (dataDir: string) => {
    const t = performance.now();
    preregistered = { events: await preregister(dataDir, hosts), s: 0 };
    preregistered.s = +((performance.now() - t) / 1000).toFixed(1);
    log(`registered ${hosts.length} hosts in the log before the start: ${preregistered.events} events in ${preregistered.s} s`);
  };
  const started = performance.now();
  const server = args.url ? undefined : await startBenchServer(serverEnv(), tokens, args.preregister ? prepare : undefined);
  const firstStartS = +((performance.now() - started) / 1000 - (preregistered?.s ?? 0)).toFixed(1);
  // --restart-first: the server writes its read models' snapshots as it stops and starts again from
  // them, as a service that has been restarted once since its log was replayed (a restart keeps a
  // model's keys as their snapshot's text until used: a smaller heap).
  let restartFirstS: number | null = null;
  if (server && args["restart-first"]) {
    restartFirstS = +((await server.restart()) / 1000).toFixed(2);
    log(`restarted from the read models' snapshots before the fleet starts: ready after ${restartFirstS} s`);
  }
  const url = args.url ?? server!.url;
  const serviceToken = args.token ?? BENCH_TOKENS.service;
  const adminToken = args["admin-token"] ?? BENCH_TOKENS.admin;
  log(`seed ${seed}; ${hosts.length} hosts x ${hosts[0]?.report().length} devices, reporting every ${intervalS} s; warm-up ${warmupS} s, then ${minutes} min measured; machine ${speed} ms`);

  const profile = `fleet-${seed}`;
  const admin = new BenchClient(url, adminToken);
  await admin.gql(`mutation($i: DeviceProfileInput!) { createDeviceProfile(input: $i) { uuid } }`, { i: { name: profile, groups: [STORM_PROFILE] } });
  await admin.close();

  // Against --url, --pid names the server's process on this machine, for its memory and CPU.
  const pid = server ? () => server.pid : args.pid ? () => Number(args.pid) : undefined;
  const rss = pid ? new RssSampler(pid, 5_000) : undefined;
  const loads: number[] = [];
  const loadTimer = setInterval(() => loads.push(loadavg()[0]!), 5_000);
  const fleet = new Fleet({ hosts, post: httpPoster(url), intervalMs: intervalS * 1000, registerMs: registerS * 1000, jitter: Number(args.jitter ?? 0.1), churn: Number(args.churn ?? 0.01), random });
  // Nova's boots come from a thread of their own, so this process's stalls (10,000 agents) are not
  // counted in the binds' latency; --storm-in-process runs them here, as before.
  const stormOptions = { url, token: serviceToken, profile, bootsPerS: Number(args["boots-per-s"] ?? 5), connections: Number(args.connections ?? 8) };
  const registered = () => [...fleet.registered];
  const storm = args["storm-in-process"] ? new BootStorm({ ...stormOptions, hostnames: registered, random }) : new StormThread({ ...stormOptions, seed: seed + 1 }, registered);
  const scrapeS = Number(args["scrape-s"] ?? 15);
  const scraper = scrapeS > 0 ? new Scraper(url.replace(/\/graphql$/, "/metrics"), adminToken, scrapeS * 1000) : undefined;
  // The load generator's own stalls (its collector, 10,000 agents' timers) are in every latency it measures.
  const ownLoop = monitorEventLoopDelay({ resolution: 10 });
  const t0 = Date.now();
  fleet.start();
  const progress = setInterval(() => {
    const s = fleet.stats;
    const recent = s.samples.filter((x) => x.at > Date.now() - 30_000).map((x) => x.ms);
    const resident = pid ? residentMiB(pid()) : null;
    const scrapes = scraper?.samples.filter((x) => x.at > Date.now() - 30_000).map((x) => Math.round(x.ms)) ?? [];
    const binds = storm.bindMs.filter((x) => x.at > Date.now() - 30_000).map((x) => x.ms);
    log(`${fleet.registered.size} hosts registered; ${s.samples.length} reports (${s.failed} failed, ${s.inFlight} in flight), last 30 s p99 ${p(recent, 99)} ms; ${storm.flows} boots (${storm.failed} failed), last 30 s bind p99 ${binds.length ? p(binds, 99) : "-"} ms; scrapes ${scrapes.join(", ") || "-"} ms; RSS ${resident?.rss ?? "-"} MiB (anon ${resident?.anon ?? "-"}); load ${loadavg()[0]!.toFixed(1)}`);
  }, 30_000);

  await new Promise((r) => setTimeout(r, warmupS * 1000));
  const measuredFrom = Date.now();
  const cpuFrom = pid ? processCpuSeconds(pid()) : null;
  const registeredAtWarmup = fleet.registered.size;
  ownLoop.enable();
  storm.start();
  log(`warm-up over: ${fleet.registered.size} hosts registered, ${fleet.stats.samples.length} reports; the boot storm starts`);
  await new Promise((r) => setTimeout(r, minutes * 60_000));
  const cpuTo = pid ? processCpuSeconds(pid()) : null;
  ownLoop.disable();
  const measuredS = (Date.now() - measuredFrom) / 1000;
  await storm.stop();
  await fleet.stop();
  clearInterval(progress);
  clearInterval(loadTimer);
  rss?.stop();
  scraper?.stop();

  const size = await readModelSize(url, adminToken);
  const reports = fleet.stats.samples;
  const measured = reports.filter((x) => x.at >= measuredFrom);
  const scraped = scraper?.samples.filter((x) => x.at >= measuredFrom) ?? [];
  const registration = reports.filter((x: ReportSample) => x.at < measuredFrom && x.full).map((x) => x.ms);
  const memory = rss?.after(measuredFrom + 5_000) ?? null;
  const anonMemory = rss?.after(measuredFrom + 5_000, "anon") ?? null;
  const dataMiB = server ? dirMiB(server.dataDir) : null;
  let restartS: number | null = null;
  let rssAfterRestart: number | null = null;
  if (server && !args["no-restart"]) {
    restartS = +((await server.restart()) / 1000).toFixed(2);
    rssAfterRestart = rssMiB(server.pid);
  }
  await server?.close();

  for (const f of fleet.stats.failures) log(`failed report: ${f}`);
  for (const f of storm.failures) log(`failed flow: ${f}`);
  const bench = {
    hosts: hosts.length,
    devices_per_host: hosts[0]?.report().length ?? 0,
    minutes,
    interval_s: intervalS,
    reports: measured.length,
    full_reports: measured.filter((x) => x.full).length,
    failed_reports: fleet.stats.failed,
    report_p50_ms: p(measured.map((x) => x.ms), 50),
    report_p99_ms: p(measured.map((x) => x.ms), 99),
    registration_p50_ms: p(registration, 50),
    registration_p99_ms: p(registration, 99),
    registered_at_warmup_end: registeredAtWarmup,
    churn: fleet.churned,
    flows: storm.flows,
    failed_flows: storm.failed,
    bind_p50_ms: p(storm.bindMs.map((x) => x.ms), 50),
    bind_p99_ms: p(storm.bindMs.map((x) => x.ms), 99),
    // The bind mutation's answer alone (the event may come before or after it).
    bind_answer_p99_ms: p(storm.bindMs.map((x) => x.answerMs), 99),
    // Each measured minute's bind p99: a tail from a few moments shows as a few minutes, not all.
    bind_p99_by_minute_ms: byMinute(storm.bindMs, measuredFrom, measuredFrom + measuredS * 1000).map((ms) => p(ms, 99)),
    // The event loop of this process (the load generator) over the measured minutes.
    bench_loop_delay_ms: { p99: +(ownLoop.percentile(99) / 1e6).toFixed(1), max: +(ownLoop.max / 1e6).toFixed(1) },
    scrape_s: scrapeS,
    scrapes: scraped.length,
    failed_scrapes: scraped.filter((x) => !x.ok).length,
    scrape_p50_ms: p(scraped.map((x) => x.ms), 50),
    scrape_max_ms: scraped.length ? Math.round(Math.max(...scraped.map((x) => x.ms))) : null,
    first_scrape_ms: scraper?.samples[0] ? Math.round(scraper.samples[0].ms) : null,
    // The server's histograms over the whole run, from the last scrape: where a bind's time goes.
    server_histograms: scraper?.last ? bindStages(scraper.last) : null,
    server_cpu_pct: cpuFrom !== null && cpuTo !== null ? +(((cpuTo - cpuFrom) / measuredS) * 100).toFixed(1) : null,
    rss_mib: memory?.last ?? null,
    rss_after_warmup_mib: memory,
    rss_anon_after_warmup_mib: anonMemory,
    read_model: size,
    data_dir_mib: dataMiB,
    preregistered,
    first_start_s: server ? firstStartS : null,
    restart_first_s: restartFirstS,
    restart_s: restartS,
    rss_after_restart_mib: rssAfterRestart,
    load_avg: { max: Math.max(...loads), mean: +(loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length)).toFixed(1) },
    machine_ms: [speed, machineSpeedMs()],
    run_s: Math.round((Date.now() - t0) / 1000),
    seed,
  };
  console.log(`BENCH ${JSON.stringify(bench)}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

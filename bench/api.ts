/**
 * Boot storm: N concurrent clients each run compute-scheduler flows: create ARQs from a one-group
 * profile, subscribe, bind, wait for accelerator-request-bound, read the ARQs.
 *
 *   npm run bench:api                                  # embedded server in this process
 *   npm run bench:api -- --redis                       # embedded log, read models on a throwaway redis-server
 *   npm run bench:api -- --url http://host:4000/graphql --token SERVICE --admin-token ADMIN [--server-pid PID]
 *   npm run bench:api -- --profile [--profile-dir DIR]  # where the server's CPU goes, by stage, per flow
 *   npm run bench:api -- --workers 4                   # the API workers' run with 4 workers (1: none)
 * Options: --clients 20 --flows 3000 --warmup 1000 --rounds 3
 *
 * Each round also runs the default configuration with API_WORKERS=2 (--workers N: N), reported as
 * workers2_flows_per_s (workersN_...), with the server's CPU per flow over all its processes and
 * the CPU this load generator took per flow (it shares the machine's cores with the workers).
 *
 * On an embedded server it also measures what observability costs: each round runs the flows on a
 * fresh server three times, interleaved, with metrics and tracing off, with metrics on (the
 * default), and with tracing on sampling 1% (spans sent over OTLP/HTTP to a sink in this process)
 * and metrics off; each round starts with the next configuration. The headline figures are the
 * default configuration's (medians over rounds); metrics_overhead_pct and tracing_overhead_pct are
 * the throughput lost against both off, and *_cpu_overhead_pct the server's extra CPU time per
 * flow (read from /proc: a figure that other work on the machine moves far less).
 * The warm-up flows are not measured: a server that has just started spends its first seconds
 * compiling its hot code (V8's optimizing compiler ran on every core for ~2 s of a 7 s run).
 * server_main_thread_busy_pct is how much of the measured flows' wall time the server's main thread
 * was on a core (near 100: it bounds the flows, and work moved to other threads or cut from it pays).
 * `machine_ms` (before and after the run) is a fixed CPU task timed in this process: on a shared
 * VM it varies by half from one minute to the next, and the figures with it.
 * `server_per_client_cpu` is the server's CPU over the measured flows divided by this load
 * generator's over the same flows: the load generator does the same work against any build, so its
 * CPU time follows the machine's speed through the run, and the ratio compares two builds measured
 * minutes apart better than either CPU time does (bench/RESULTS.md, "Method").
 * With --url, --server-pid PID (a server on this machine) reads that server's CPU from /proc as
 * for an embedded one.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { BenchClient, parseArgs, percentile } from "./lib/client.js";
import { fakeHost } from "./lib/fake-host.js";
import { BENCH_TOKENS, startBenchServer } from "./lib/embedded-server.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { serverPidOption } from "./lib/process-cpu.js";
import { cpuSpent, profileNextServer, serverCpu, splitProfiledCpu } from "./lib/server-profile.js";
import { startRedisServer } from "./lib/redis-server.js";

const HANDLES_PER_HOST = 64;
const args = parseArgs(process.argv.slice(2));
// 20 clients: about where throughput stops growing on the 2-vCPU machines of bench/RESULTS.md
// (more clients add queueing to the latency, not flows per second).
const clients = Number(args.clients ?? 20);
const flows = Number(args.flows ?? 3000);
const warmup = Number(args.warmup ?? 1000);

const BOUND = `subscription($arqs: [ID!]) { acceleratorRequestBound(arqUuids: $arqs) { tag status reason } }`;
/**
 * --profile: one embedded server (the default configuration) under `node --cpu-prof`; the main
 * thread's CPU per flow (from /proc) split by its profile's stages of a request
 * (bench/lib/cpu-stages.ts), the audit index's write thread by its own profile, and the rest of the
 * process's CPU (threads no profile sees: V8's compiler and collector helpers, libuv's pool) apart,
 * each in microseconds per flow. Shares inside one process hardly move when other work loads the
 * machine; run it before and after a change to see what the change costs.
 */
async function profileStages(speedBefore: number) {
  // --profile-dir DIR keeps the profile there (for a closer look: node dist/bench/cpuprofile-share.js DIR).
  const profiled = profileNextServer(args["profile-dir"]);
  const t0 = performance.now();
  const server = await startBenchServer({});
  let r: RunResult;
  try {
    r = await runFlows(server.url, BENCH_TOKENS.service, BENCH_TOKENS.admin, "embedded, profiled", server.pid);
  } finally {
    await server.close();
  }
  if (r.server_cpu_ms_per_flow === null || r.main_cpu_ms === null) throw new Error("the server's CPU could not be read from /proc");
  const measured = flows - r.errors;
  const cpu = { units: measured, allMs: r.server_cpu_ms_per_flow * measured, mainMs: r.main_cpu_ms, profilerMs: r.profiler_cpu_ms ?? 0 };
  const stages = splitProfiledCpu(profiled, { skipMs: r.window.startMs - t0, untilMs: r.window.endMs - t0 }, cpu, "flow");
  report("profile", r, { stages_us_per_flow: Object.fromEntries(stages.map((s) => [s.stage, s.usPerFlow])), stages_pct: Object.fromEntries(stages.map((s) => [s.stage, s.pct])) }, speedBefore);
}

const CREATE = `mutation($name: String!) { createAcceleratorRequests(deviceProfileName: $name) { uuid } }`;
const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`;
const READ = `query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { uuid state attachHandleType attachHandleInfo } } }`;

interface RunResult {
  flows_per_s: number;
  /** The server's CPU time (user + system) per measured flow; null when it cannot be read (--url, no /proc). */
  server_cpu_ms_per_flow: number | null;
  bind_p50_ms: number;
  bind_p95_ms: number;
  /** When the measured flows began and ended (performance.now() of this process). */
  window: { startMs: number; endMs: number };
  bind_p99_ms: number;
  /** This process's CPU time (the load generator) per measured flow. */
  client_cpu_ms_per_flow: number;
  /** The server's CPU over this process's, over the measured flows; null when the server's cannot be read. */
  server_per_client_cpu: number | null;
  /**
   * How busy the server's main thread was over the measured flows (its CPU time over the wall
   * time, %; with API workers the primary's); null when it cannot be read. Near 100: the main
   * thread bounds the flows.
   */
  server_main_thread_busy_pct: number | null;
  /** The CPU the server's main thread took over the measured flows, ms (the primary's with API workers); null when it cannot be read. */
  main_cpu_ms: number | null;
  /** The CPU the server's profiler threads took over the measured flows, ms (0 when not profiled; part of server_cpu_ms_per_flow). */
  profiler_cpu_ms: number | null;
  errors: number;
  errorSamples: string[];
}

/** Sets up hosts and a profile, then runs the warm-up and the measured flows against one server. */
async function runFlows(url: string, token: string, adminToken: string, label: string, serverPid?: number): Promise<RunResult> {
  const admin = new BenchClient(url, adminToken);
  const profile = `bench-${randomUUID().slice(0, 8)}`;
  await admin.gql(`mutation($i: DeviceProfileInput!) { createDeviceProfile(input: $i) { uuid } }`, {
    i: { name: profile, groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] },
  });
  const hosts = Math.ceil((flows + warmup) / HANDLES_PER_HOST);
  process.stderr.write(`[${label}] setup: profile ${profile}, ${hosts} hosts x ${HANDLES_PER_HOST} handles\n`);
  const hostPrefix = `bench-${randomUUID().slice(0, 6)}`;
  for (let h = 0; h < hosts; h++) {
    await admin.gql(
      `mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { added } }`,
      { h: `${hostPrefix}-${h}`, d: fakeHost(`${hostPrefix}-${h}`, HANDLES_PER_HOST) },
    );
  }
  const rps: Array<{ uuid: string; parentProviderName: string }> = (
    await admin.gql(`{ resourceProviders { uuid parentProviderName } }`)
  ).resourceProviders.filter((r: { parentProviderName: string }) => r.parentProviderName.startsWith(hostPrefix));
  await admin.close();

  const pool = Array.from({ length: clients }, () => new BenchClient(url, token));
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  const errorSamples: string[] = [];

  async function flow(c: BenchClient, i: number, record: boolean) {
    const rp = rps[i % rps.length]!;
    try {
      const arqs: Array<{ uuid: string }> = (await c.gql(CREATE, { name: profile })).createAcceleratorRequests;
      const instance = randomUUID();
      const uuids = arqs.map((a) => a.uuid);
      const events = c.waitFor<{ acceleratorRequestBound: { status: string } }>(BOUND, { arqs: uuids }, uuids.length);
      const t0 = performance.now();
      await c.gql(BIND, { b: uuids.map((arqUuid) => ({ arqUuid, hostname: rp.parentProviderName, deviceRpUuid: rp.uuid, instanceUuid: instance })) });
      const got = await events;
      const dt = performance.now() - t0;
      if (got.some((e) => e.acceleratorRequestBound.status !== "COMPLETED")) throw new Error("bind FAILED");
      const read = (await c.gql(READ, { i: instance })).acceleratorRequests.nodes;
      if (read.length !== uuids.length || read.some((a: { state: string }) => a.state !== "BOUND")) throw new Error("read after bind not BOUND");
      if (record) latencies.push(dt);
    } catch (err) {
      if (record) errors++;
      if (errorSamples.length < 5) errorSamples.push((err as Error).message);
    }
  }

  async function run(total: number, record: boolean) {
    next = 0;
    const base = record ? warmup : 0;
    await Promise.all(
      pool.map(async (c) => {
        for (;;) {
          const i = next++;
          if (i >= total) return;
          await flow(c, base + i, record);
          if (record && (i + 1) % 1000 === 0) process.stderr.write(`[${label}]   ${i + 1}/${total} flows\n`);
        }
      }),
    );
  }

  await run(warmup, false);
  const t0 = performance.now();
  const window = { startMs: t0, endMs: t0 };
  const cpu0 = serverCpu(serverPid);
  const client0 = process.cpuUsage();
  await run(flows, true);
  const client = process.cpuUsage(client0);
  window.endMs = performance.now();
  const seconds = (window.endMs - t0) / 1000;
  const spent = cpuSpent(cpu0, serverCpu(serverPid));
  const clientMs = (client.user + client.system) / 1000;
  await Promise.all(pool.map((c) => c.close()));
  latencies.sort((a, b) => a - b);
  const r = {
    flows_per_s: Math.round((flows - errors) / seconds),
    server_cpu_ms_per_flow: spent.allMs === null ? null : +(spent.allMs / (flows - errors)).toFixed(3),
    bind_p50_ms: +percentile(latencies, 50).toFixed(1),
    bind_p95_ms: +percentile(latencies, 95).toFixed(1),
    bind_p99_ms: +percentile(latencies, 99).toFixed(1),
    client_cpu_ms_per_flow: +(clientMs / flows).toFixed(3),
    server_per_client_cpu: spent.allMs === null ? null : +(spent.allMs / clientMs).toFixed(3),
    server_main_thread_busy_pct: spent.mainMs === null ? null : +(spent.mainMs / 10 / seconds).toFixed(1),
    main_cpu_ms: spent.mainMs,
    profiler_cpu_ms: spent.profilerMs,
    errors,
    errorSamples,
    window,
  };
  const mainBusy = r.server_main_thread_busy_pct === null ? "" : ` (main thread busy ${r.server_main_thread_busy_pct}%)`;
  const ratio = r.server_per_client_cpu === null ? "" : `, ${r.server_per_client_cpu}x the load generator's`;
  process.stderr.write(`[${label}] ${r.flows_per_s} flows/s, server CPU ${r.server_cpu_ms_per_flow} ms per flow${mainBusy}${ratio}; bind p50 ${r.bind_p50_ms} ms, p99 ${r.bind_p99_ms} ms; ${errors} errors\n`);
  return r;
}

/** An OTLP/HTTP endpoint that takes spans and drops them, counting what it got. */
async function startSpanSink() {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      spans += (Buffer.concat(chunks).toString("utf8").match(/"spanId"/g) ?? []).length;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const CONFIGS = {
  off: { METRICS: "off" },
  metrics: { METRICS: "on" },
  tracing: { METRICS: "off", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" },
  /** The default configuration with API workers (--workers N; 1 leaves this run out). */
  workers: { METRICS: "on", API_WORKERS: String(args.workers ?? 2) },
} as const;
type ConfigName = keyof typeof CONFIGS;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main() {
  const speedBefore = machineSpeedMs();
  process.stderr.write(`machine: ${speedBefore} ms for the fixed CPU task\n`);
  if (args.profile) return profileStages(speedBefore);
  if (args.url) {
    if (!args.token || !args["admin-token"]) throw new Error("with --url, give --token (a service token) and --admin-token (to set up hosts and a profile)");
    const r = await runFlows(args.url, args.token, args["admin-token"], args.mode ?? "remote", serverPidOption(args["server-pid"]));
    return report(args.mode ?? "remote", r, { metrics_overhead_pct: null, tracing_overhead_pct: null }, speedBefore);
  }
  const rounds = Number(args.rounds ?? 3);
  const mode = args.redis ? "redis" : "embedded";
  const redis = args.redis ? await startRedisServer() : undefined;
  const sink = await startSpanSink();
  const results: Record<ConfigName, RunResult[]> = { off: [], metrics: [], tracing: [], workers: [] };
  const workers = Number(args.workers ?? 2);
  try {
    // API workers share the embedded log: not with Redis read models.
    const names = (Object.keys(CONFIGS) as ConfigName[]).filter((n) => n !== "workers" || (workers > 1 && !redis));
    for (let round = 1; round <= rounds; round++) {
      // Each round starts with the next configuration, so a machine that slows down (or speeds up)
      // during the run does not always penalise the same one.
      for (const name of names.map((_, i) => names[(i + round - 1) % names.length]!)) {
        const env: Record<string, string> = { ...CONFIGS[name] };
        if (redis) env.REDIS_URL = redis.url;
        if (name === "tracing") env.OTEL_EXPORTER_OTLP_ENDPOINT = sink.url;
        const server = await startBenchServer(env);
        try {
          results[name].push(await runFlows(server.url, BENCH_TOKENS.service, BENCH_TOKENS.admin, `round ${round}/${rounds} ${mode} ${name}`, server.pid));
        } finally {
          await server.close();
        }
      }
    }
  } finally {
    await sink.close();
    await redis?.stop();
  }
  const rate = (n: ConfigName) => median(results[n].map((r) => r.flows_per_s));
  const loss = (n: ConfigName) => +(((rate("off") - rate(n)) / rate("off")) * 100).toFixed(1);
  // CPU per flow moves far less than throughput when other work shares the machine.
  const cpu = (n: ConfigName) => median(results[n].map((r) => r.server_cpu_ms_per_flow ?? Number.NaN));
  const cpuCost = (n: ConfigName) => (Number.isNaN(cpu("off")) ? null : +(((cpu(n) - cpu("off")) / cpu("off")) * 100).toFixed(1));
  const headline = results.metrics.reduce((best, r) => (Math.abs(r.flows_per_s - rate("metrics")) < Math.abs(best.flows_per_s - rate("metrics")) ? r : best));
  process.stderr.write(`spans received at 1% sampling: ${sink.spans()}\n`);
  report(mode, { ...headline, flows_per_s: Math.round(rate("metrics")) }, {
    metrics_overhead_pct: loss("metrics"),
    tracing_overhead_pct: loss("tracing"),
    flows_per_s_off: results.off.map((r) => r.flows_per_s),
    flows_per_s_metrics: results.metrics.map((r) => r.flows_per_s),
    flows_per_s_tracing: results.tracing.map((r) => r.flows_per_s),
    metrics_cpu_overhead_pct: cpuCost("metrics"),
    tracing_cpu_overhead_pct: cpuCost("tracing"),
    server_cpu_ms_per_flow_off: results.off.map((r) => r.server_cpu_ms_per_flow),
    server_cpu_ms_per_flow_metrics: results.metrics.map((r) => r.server_cpu_ms_per_flow),
    server_cpu_ms_per_flow_tracing: results.tracing.map((r) => r.server_cpu_ms_per_flow),
    ...(results.workers.length
      ? {
          [`workers${workers}_flows_per_s`]: Math.round(rate("workers")),
          [`workers${workers}_flows_per_s_rounds`]: results.workers.map((r) => r.flows_per_s),
          [`workers${workers}_server_cpu_ms_per_flow`]: results.workers.map((r) => r.server_cpu_ms_per_flow),
          [`workers${workers}_bind_p99_ms`]: results.workers.map((r) => r.bind_p99_ms),
          [`workers${workers}_client_cpu_ms_per_flow`]: results.workers.map((r) => r.client_cpu_ms_per_flow),
          [`workers${workers}_primary_main_thread_busy_pct`]: results.workers.map((r) => r.server_main_thread_busy_pct),
        }
      : {}),
    client_cpu_ms_per_flow: results.metrics.map((r) => r.client_cpu_ms_per_flow),
    server_per_client_cpu_metrics: results.metrics.map((r) => r.server_per_client_cpu),
    server_main_thread_busy_pct: results.metrics.map((r) => r.server_main_thread_busy_pct),
    rounds,
  }, speedBefore);
}

const signed = (x: unknown) => (typeof x === "number" ? `${x >= 0 ? "+" : ""}${x}%` : "-");

function report(mode: string, r: RunResult, extra: Record<string, unknown>, speedBefore: number) {
  const speedAfter = machineSpeedMs();
  const out = {
    mode,
    clients,
    flows,
    flows_per_s: r.flows_per_s,
    server_cpu_ms_per_flow: r.server_cpu_ms_per_flow,
    server_per_client_cpu: r.server_per_client_cpu,
    bind_p50_ms: r.bind_p50_ms,
    bind_p95_ms: r.bind_p95_ms,
    bind_p99_ms: r.bind_p99_ms,
    errors: r.errors,
    ...extra,
    machine_ms: [speedBefore, speedAfter],
  };
  console.log(
    `mode ${mode}: ${out.flows_per_s} flows/s (metrics on, the default); bind latency p50 ${out.bind_p50_ms} ms, p95 ${out.bind_p95_ms} ms, p99 ${out.bind_p99_ms} ms; ` +
      `${r.errors} errors; throughput lost to metrics ${extra.metrics_overhead_pct ?? "-"}%, to tracing at 1% ${extra.tracing_overhead_pct ?? "-"}%; ` +
      `server CPU per flow ${signed(extra.metrics_cpu_overhead_pct)} and ${signed(extra.tracing_cpu_overhead_pct)}; machine ${speedBefore}/${speedAfter} ms`,
  );
  if (r.errorSamples.length) console.log(`error samples: ${r.errorSamples.join(" | ")}`);
  console.log(`BENCH ${JSON.stringify(out)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

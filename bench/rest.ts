/**
 * Nova's boot flow over the Cyborg v2 REST API: each client creates the ARQs of a one-accelerator
 * profile (POST), binds them to a host's resource provider in one PATCH, polls
 * `?instance=&bind_state=resolved` until the binds resolve (423 until then, as Cyborg answers),
 * then deletes the instance's ARQs (DELETE ?instance=). Bind latency runs from the PATCH to the
 * resolved answer. By default: 8, 32 and 64 concurrent clients, on the embedded server and with
 * read models on a throwaway redis-server, each server in its own process.
 *
 *   npm run bench:rest
 *   npm run bench:rest -- --clients 64 --modes embedded --flows 5000 --warmup 1000
 *   npm run bench:rest -- --profiles 16        # flows spread over 16 profiles (flavors), not one
 *   npm run bench:rest -- --url http://host:4000 --token SERVICE --admin-token ADMIN [--server-pid PID]   # a running server
 *   npm run bench:rest -- --profile [--profile-dir DIR]   # the server's CPU a flow by stage (embedded, 64 clients)
 *
 * Prints one line per run and ends with `BENCH {json}`: flows_per_s (embedded, most clients),
 * bind_p99_ms (embedded, fewest clients), failed (all runs), and every run. Each run has the
 * server's CPU a flow (all its processes) and `server_per_client_cpu`, the server's CPU over this
 * load generator's over the same flows (bench/RESULTS.md, "Method": it compares builds measured
 * minutes apart), when the server's CPU can be read: a server it started, or `--server-pid`.
 * `--profile` runs the server under node's CPU profiler and splits its CPU a flow by stage
 * (lib/server-profile.ts), as bench:api and bench:osacc do.
 */
import { randomUUID } from "node:crypto";
import { BenchClient, parseArgs, percentile } from "./lib/client.js";
import { BENCH_TOKENS, startBenchServer } from "./lib/embedded-server.js";
import { fakeHost } from "./lib/fake-host.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { serverPidOption } from "./lib/process-cpu.js";
import { startRedisServer } from "./lib/redis-server.js";
import { cpuSpent, profileNextServer, serverCpu, splitProfiledCpu, type ServerCpu } from "./lib/server-profile.js";
import { RestBenchClient } from "./lib/rest-client.js";

const args = parseArgs(process.argv.slice(2));
const profile = args.profile !== undefined;
if (profile && args.url) throw new Error("--profile runs a server of its own: it does not take --url");
// --profile: one run, on the embedded server.
const clientCounts = (args.clients ?? (profile ? "64" : "8,32,64")).split(",").map(Number).slice(0, profile ? 1 : undefined);
const modes = (args.url ? "remote" : profile ? "embedded" : (args.modes ?? "embedded,redis")).split(",") as Array<"embedded" | "redis" | "remote">;
const flows = Number(args.flows ?? 4000);
const profileCount = Number(args.profiles ?? 1);
const warmup = Number(args.warmup ?? 1000);
const HOSTS = Math.max(...clientCounts);
const HANDLES_PER_HOST = 8;
const POLL_TIMEOUT_MS = 30_000;

interface Run {
  mode: string;
  clients: number;
  profiles: number;
  flows: number;
  flows_per_s: number;
  bind_p50_ms: number;
  bind_p95_ms: number;
  bind_p99_ms: number;
  failed: number;
  polls_per_flow: number;
  /** Mean milliseconds of each request of a flow. */
  step_ms: Record<string, number>;
  /** The server's CPU (all its processes) a measured flow; null when it cannot be read (--url without --server-pid). */
  server_cpu_ms_per_flow: number | null;
  /** This process's CPU (the load generator) a measured flow. */
  client_cpu_ms_per_flow: number;
  /** The server's CPU over this process's, over the measured flows; null when the server's cannot be read. */
  server_per_client_cpu: number | null;
  /** --profile: the server's CPU a flow by stage, in microseconds. */
  stages_us_per_flow?: Record<string, number>;
  machine_ms: [number, number];
}

/** What --profile needs of a run besides its figures: when its flows ran, and the server's CPU then. */
interface Measured extends ServerCpu {
  window: { startMs: number; endMs: number };
}

/** One server (started here, or --url): profiles and HOSTS hosts, then each client count in turn. */
async function benchMode(mode: "embedded" | "redis" | "remote"): Promise<Run[]> {
  const cleanups: Array<() => Promise<void>> = [];
  const tokens = { admin: args["admin-token"] ?? BENCH_TOKENS.admin, service: args.token ?? BENCH_TOKENS.service };
  let base = args.url?.replace(/\/+$/, "");
  let serverPid = mode === "remote" ? serverPidOption(args["server-pid"]) : undefined;
  const profiled = profile ? profileNextServer(args["profile-dir"]) : undefined;
  const serverStart = performance.now();
  const measured: Measured[] = [];
  if (mode !== "remote") {
    const env: Record<string, string> = {};
    if (mode === "redis") {
      const redis = await startRedisServer();
      cleanups.push(() => redis.stop());
      env.REDIS_URL = redis.url;
    }
    const server = await startBenchServer(env);
    cleanups.unshift(() => server.close());
    base = server.url.replace(/\/graphql$/, "");
    serverPid = server.pid;
  }
  let runs: Run[];
  try {
    const admin = new RestBenchClient(base!, tokens.admin);
    const profileBase = `bench-${randomUUID().slice(0, 8)}`;
    const profiles = Array.from({ length: profileCount }, (_, i) => `${profileBase}-${i}`);
    for (const name of profiles) {
      await admin.expect(201, "POST", "/v2/device_profiles", [{ name, groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] }]);
    }
    // Host agents report over GraphQL (the REST API has no inventory report).
    const agent = new BenchClient(`${base}/graphql`, tokens.admin);
    const prefix = `bench-${randomUUID().slice(0, 6)}`;
    for (let h = 0; h < HOSTS; h++) {
      await agent.gql(`mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { added } }`, {
        h: `${prefix}-${h}`,
        d: fakeHost(`${prefix}-${h}`, HANDLES_PER_HOST),
      });
    }
    await agent.close();
    const deployables: Array<{ name: string; rp_uuid: string }> = (await admin.expect(200, "GET", "/v2/deployables")).deployables;
    const targets = deployables
      .filter((d) => d.name.startsWith(prefix))
      .map((d) => ({ hostname: d.name.replace(/_FakeDevice$/, ""), rp: d.rp_uuid }));
    admin.close();
    process.stderr.write(`${mode}: ${profiles.length} profile(s) ${profileBase}-*, ${targets.length} hosts x ${HANDLES_PER_HOST} handles\n`);

    runs = [];
    for (const clients of clientCounts) {
      const { run, measured: m } = await measure(mode, base!, tokens.service, profiles, targets, clients, serverPid);
      runs.push(run);
      measured.push(m);
    }
  } finally {
    for (const c of cleanups) await c();
  }
  if (profiled) {
    // The server has stopped and written its profiles: the run's flows, by stage.
    const [run, m] = [runs[0]!, measured[0]!];
    if (m.allMs === null || m.mainMs === null || m.profilerMs === null) throw new Error("the server's CPU could not be read from /proc");
    const units = run.flows - run.failed;
    const window = { skipMs: m.window.startMs - serverStart, untilMs: m.window.endMs - serverStart };
    const stages = splitProfiledCpu(profiled, window, { units, allMs: m.allMs, mainMs: m.mainMs, profilerMs: m.profilerMs }, "flow");
    run.stages_us_per_flow = Object.fromEntries(stages.map((st) => [st.stage, st.usPerFlow]));
  }
  return runs;
}

async function measure(
  mode: string,
  base: string,
  token: string,
  profiles: string[],
  targets: Array<{ hostname: string; rp: string }>,
  clients: number,
  serverPid: number | undefined,
): Promise<{ run: Run; measured: Measured }> {
  const pool = Array.from({ length: clients }, () => new RestBenchClient(base, token));
  const latencies: number[] = [];
  const errorSamples: string[] = [];
  let failed = 0;
  let polls = 0;
  /** Summed milliseconds per step of the recorded flows. */
  const steps = { create: 0, bind: 0, poll: 0, delete: 0 };
  let next = 0;

  async function flow(c: RestBenchClient, i: number, record: boolean) {
    const target = targets[i % targets.length]!;
    const profile = profiles[i % profiles.length]!;
    const instance = randomUUID();
    try {
      const tc = performance.now();
      const { arqs } = await c.expect(201, "POST", "/v2/accelerator_requests", { device_profile_name: profile });
      const patch: Record<string, unknown[]> = {};
      for (const a of arqs as Array<{ uuid: string }>) {
        patch[a.uuid] = [
          { op: "add", path: "/hostname", value: target.hostname },
          { op: "add", path: "/device_rp_uuid", value: target.rp },
          { op: "add", path: "/instance_uuid", value: instance },
        ];
      }
      const t0 = performance.now();
      await c.expect(202, "PATCH", "/v2/accelerator_requests", patch);
      const tb = performance.now();
      let resolved: Array<{ state: string }> | undefined;
      for (;;) {
        const r = await c.request("GET", `/v2/accelerator_requests?instance=${instance}&bind_state=resolved`);
        if (record) polls++;
        if (r.status === 200) {
          resolved = r.body.arqs;
          break;
        }
        if (r.status !== 423) throw new Error(`poll: ${r.status}`);
        if (performance.now() - t0 > POLL_TIMEOUT_MS) throw new Error(`not resolved after ${POLL_TIMEOUT_MS} ms`);
        await new Promise((res) => setTimeout(res, 2));
      }
      const dt = performance.now() - t0;
      if (resolved!.length !== arqs.length || resolved!.some((a) => a.state !== "Bound")) {
        throw new Error(`resolved: ${resolved!.map((a) => a.state).join(",")}`);
      }
      const td = performance.now();
      await c.expect(204, "DELETE", `/v2/accelerator_requests?instance=${instance}`);
      if (record) {
        latencies.push(dt);
        steps.create += t0 - tc;
        steps.bind += tb - t0;
        steps.poll += td - tb;
        steps.delete += performance.now() - td;
      }
    } catch (err) {
      if (record) failed++;
      if (errorSamples.length < 5) errorSamples.push((err as Error).message);
      // Leave nothing bound behind a failed flow.
      await c.request("DELETE", `/v2/accelerator_requests?instance=${instance}`).catch(() => undefined);
    }
  }

  async function run(total: number, record: boolean, offset: number) {
    next = 0;
    await Promise.all(
      pool.map(async (c) => {
        for (;;) {
          const i = next++;
          if (i >= total) return;
          await flow(c, offset + i, record);
        }
      }),
    );
  }

  const before = machineSpeedMs();
  await run(warmup, false, 0);
  const cpu0 = serverCpu(serverPid);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  await run(flows, true, warmup);
  const t1 = performance.now();
  const seconds = (t1 - t0) / 1000;
  const client = process.cpuUsage(client0);
  const spent = cpuSpent(cpu0, serverCpu(serverPid));
  const after = machineSpeedMs();
  const serverMs = spent.allMs;
  const clientMs = (client.user + client.system) / 1000;
  pool.forEach((c) => c.close());

  latencies.sort((a, b) => a - b);
  const r: Run = {
    mode,
    clients,
    profiles: profiles.length,
    flows,
    flows_per_s: Math.round((flows - failed) / seconds),
    bind_p50_ms: +percentile(latencies, 50).toFixed(1),
    bind_p95_ms: +percentile(latencies, 95).toFixed(1),
    bind_p99_ms: +percentile(latencies, 99).toFixed(1),
    failed,
    polls_per_flow: +(polls / flows).toFixed(2),
    step_ms: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, +(v / Math.max(1, latencies.length)).toFixed(1)])),
    server_cpu_ms_per_flow: serverMs === null ? null : +(serverMs / Math.max(1, flows - failed)).toFixed(3),
    client_cpu_ms_per_flow: +(clientMs / flows).toFixed(3),
    server_per_client_cpu: serverMs === null ? null : +(serverMs / clientMs).toFixed(3),
    machine_ms: [before, after],
  };
  console.log(
    `${mode}, ${clients} clients, ${profiles.length} profile(s): ${r.flows_per_s} flows/s; bind p50 ${r.bind_p50_ms} ms, p95 ${r.bind_p95_ms} ms, p99 ${r.bind_p99_ms} ms; ` +
      `${failed} failed of ${flows}; ${r.polls_per_flow} polls per flow; mean ms per step ${JSON.stringify(r.step_ms)}; ` +
      `${r.server_cpu_ms_per_flow === null ? "" : `server CPU ${r.server_cpu_ms_per_flow} ms a flow, ${r.server_per_client_cpu}x the load generator's; `}machine ${before}/${after} ms`,
  );
  if (errorSamples.length) console.log(`  failures: ${errorSamples.join(" | ")}`);
  return { run: r, measured: { window: { startMs: t0, endMs: t1 }, ...spent } };
}

async function main() {
  const runs: Run[] = [];
  for (const mode of modes) runs.push(...(await benchMode(mode)));
  const headline = runs.filter((r) => r.mode === modes[0]);
  const most = headline.reduce((a, b) => (b.clients > a.clients ? b : a));
  const fewest = headline.reduce((a, b) => (b.clients < a.clients ? b : a));
  const result = {
    flows_per_s: most.flows_per_s,
    bind_p99_ms: fewest.bind_p99_ms,
    failed: runs.reduce((n, r) => n + r.failed, 0),
    runs,
  };
  console.log(`BENCH ${JSON.stringify(result)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

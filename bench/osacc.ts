/**
 * bench:osacc: os-acc plug + unplug cycles at 1, 8 and 32 concurrent instances: plug latency
 * (create the ARQs from a device profile and bind them in one call, wait for the bound events of
 * binds still under way, return the attach entries) and cycles per second. os-acc runs on each compute node: each concurrent instance is
 * on a compute node of its own (one host, one os-acc). `--one-host` puts them all on one host,
 * whose stream then orders every allocation and release.
 *
 *   npm run bench:osacc                                # embedded server in its own process
 *   npm run bench:osacc -- --redis                     # read models on a throwaway redis-server
 *   npm run bench:osacc -- --profile [--profile-dir DIR]  # the server's CPU a cycle by stage, at the first level
 * Options: --levels 1,8,32 --cycles 600 --warmup 1000 --one-host
 *
 * The warm-up (8 concurrent) lets V8 optimise the server's code first, as in a server that has run
 * a while: after 200 cycles it was still compiling through the measured ones (server CPU a cycle
 * about a fifth higher, bench/RESULTS.md).
 */
import { randomUUID } from "node:crypto";
import { OsAcc } from "../src/clients/osacc/index.js";
import { BenchClient, parseArgs, percentile } from "./lib/client.js";
import { BENCH_TOKENS, startBenchServer } from "./lib/embedded-server.js";
import { fakeHost } from "./lib/fake-host.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { namedThreadsCpuSeconds, processCpuSeconds, threadCpuSeconds } from "./lib/process-cpu.js";
import { PROFILER_THREAD, profileNextServer, splitProfiledCpu } from "./lib/server-profile.js";
import { startRedisServer } from "./lib/redis-server.js";

const args = parseArgs(process.argv.slice(2));
// --profile: one level (the first of --levels, 8 by default), its CPU split by stage (lib/server-profile.ts).
const levels = (args.levels ?? (args.profile ? "8" : "1,8,32")).split(",").map(Number).slice(0, args.profile ? 1 : undefined);
const cycles = Number(args.cycles ?? 600);
const warmup = Number(args.warmup ?? 1000);
const HANDLES = 64;

async function main() {
  const cleanups: Array<() => Promise<void>> = [];
  const env: Record<string, string> = {};
  if (args.redis) {
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    env.REDIS_URL = redis.url;
  }
  const profiled = args.profile ? profileNextServer(args["profile-dir"]) : undefined;
  const serverStart = performance.now();
  const server = await startBenchServer(env);
  cleanups.unshift(() => server.close());
  const admin = new BenchClient(server.url, BENCH_TOKENS.admin);
  await admin.gql(`mutation($i: DeviceProfileInput!) { createDeviceProfile(input: $i) { uuid } }`, { i: { name: "bench-fpga", groups: [{ "resources:FPGA": "1" }] } });
  const hostCount = args["one-host"] ? 1 : Math.max(...levels, 8);
  const rps: Array<{ uuid: string; hostname: string }> = [];
  for (let h = 0; h < hostCount; h++) {
    const hostname = `compute-${h}`;
    await admin.gql(`mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { added } }`, { h: hostname, d: fakeHost(hostname, HANDLES) });
    rps.push({ uuid: (await admin.gql(`query($h: String) { resourceProviders(hostname: $h) { uuid } }`, { h: hostname })).resourceProviders[0].uuid, hostname });
  }
  await admin.close();
  const specs = { "accel:device_profile": "bench-fpga" };

  async function level(concurrency: number, total: number) {
    const nodes = Array.from({ length: concurrency }, (_, i) => ({ acc: new OsAcc({ url: server.url, token: BENCH_TOKENS.service }), rp: rps[i % rps.length]! }));
    const plugs: number[] = [];
    let failed = 0;
    let next = 0;
    const cpu0 = processCpuSeconds(server.pid);
    const main0 = threadCpuSeconds(server.pid);
    const profiler0 = namedThreadsCpuSeconds(server.pid, PROFILER_THREAD);
    const t0 = performance.now();
    await Promise.all(
      nodes.map(async ({ acc, rp }) => {
        while (next < total) {
          next++;
          const instance = { uuid: randomUUID(), project: "bench" };
          try {
            const p0 = performance.now();
            const attached = await acc.plug(instance, rp, specs);
            plugs.push(performance.now() - p0);
            if (attached.length !== 1 || (await acc.unplug(instance)) !== 1) throw new Error("a cycle did not plug and unplug one accelerator");
          } catch (err) {
            failed++;
            if (failed <= 3) process.stderr.write(`  failed: ${(err as Error).message}\n`);
          }
        }
      }),
    );
    const t1 = performance.now();
    const seconds = (t1 - t0) / 1000;
    const cpu1 = processCpuSeconds(server.pid);
    const main1 = threadCpuSeconds(server.pid);
    const profiler1 = namedThreadsCpuSeconds(server.pid, PROFILER_THREAD);
    await Promise.all(nodes.map((n) => n.acc.close()));
    plugs.sort((a, b) => a - b);
    const ms = (a: number | null, b: number | null) => (a === null || b === null ? null : (b - a) * 1000);
    const measured = { window: { skipMs: t0 - serverStart, untilMs: t1 - serverStart }, allMs: ms(cpu0, cpu1), mainMs: ms(main0, main1), profilerMs: ms(profiler0, profiler1) };
    const serverCpu = measured.allMs === null ? null : +(measured.allMs / total).toFixed(2);
    return { concurrency, cycles: total, cycles_per_s: Math.round((total - failed) / seconds), plug_p50_ms: +percentile(plugs, 50).toFixed(1), plug_p99_ms: +percentile(plugs, 99).toFixed(1), failed, server_cpu_ms_per_cycle: serverCpu, measured };
  }

  const speedBefore = machineSpeedMs();
  process.stderr.write(`machine: ${speedBefore} ms for the fixed CPU task\nwarm-up: ${warmup} cycles\n`);
  await level(8, warmup);
  const results: Array<Awaited<ReturnType<typeof level>>> = [];
  for (const c of levels) {
    const r = await level(c, cycles);
    process.stderr.write(`  ${c} concurrent: ${r.cycles_per_s} cycles/s, plug p50 ${r.plug_p50_ms} ms, p99 ${r.plug_p99_ms} ms, ${r.failed} failed, server CPU ${r.server_cpu_ms_per_cycle} ms a cycle\n`);
    results.push(r);
  }
  const speedAfter = machineSpeedMs();
  for (const c of cleanups) await c();
  let stages: Record<string, number> | undefined;
  if (profiled) {
    // The server has stopped and written its profiles: the first level's cycles, by stage.
    const { window, allMs, mainMs, profilerMs } = results[0]!.measured;
    if (allMs === null || mainMs === null || profilerMs === null) throw new Error("the server's CPU could not be read from /proc");
    const split = splitProfiledCpu(profiled, window, { units: results[0]!.cycles, allMs, mainMs, profilerMs }, "cycle");
    stages = Object.fromEntries(split.map((st) => [st.stage, st.usPerFlow]));
  }
  const at = (c: number) => results.find((r) => r.concurrency === c);
  const summary = {
    mode: args.redis ? "redis" : "embedded",
    hosts: hostCount,
    plug_p99_ms: at(8)?.plug_p99_ms ?? null,
    cycles_per_s: at(32)?.cycles_per_s ?? null,
    failed: results.reduce((n, r) => n + r.failed, 0),
    levels: results.map(({ measured: _, ...r }) => r),
    ...(stages ? { stages_us_per_cycle: stages } : {}),
    machine_ms: [speedBefore, speedAfter],
  };
  console.log(`plug p99 at 8 concurrent: ${summary.plug_p99_ms} ms; ${summary.cycles_per_s} cycles/s at 32; ${summary.failed} failed`);
  console.log(`BENCH ${JSON.stringify(summary)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

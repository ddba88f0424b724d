/**
 * Boot storm: N concurrent clients each run compute-scheduler flows: create ARQs from a one-group
 * profile, subscribe, bind, wait for accelerator-request-bound, read the ARQs.
 *
 *   npm run bench:api                                  # embedded server in this process
 *   npm run bench:api -- --redis                       # embedded log, read models on a throwaway redis-server
 *   npm run bench:api -- --url http://host:4000/graphql --token SERVICE --admin-token ADMIN
 * Options: --clients 20 --flows 3000 --warmup 1000
 * The warm-up flows are not measured: a server that has just started spends its first seconds
 * compiling its hot code (V8's optimizing compiler ran on every core for ~2 s of a 7 s run).
 * `machine_ms` (before and after the run) is a fixed CPU task timed in this process: on a shared
 * VM it varies by half from one minute to the next, and the figures with it.
 */
import { randomUUID } from "node:crypto";
import { BenchClient, parseArgs, percentile } from "./lib/client.js";
import { fakeHost } from "./lib/fake-host.js";
import { BENCH_TOKENS, startBenchServer } from "./lib/embedded-server.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { startRedisServer } from "./lib/redis-server.js";

const HANDLES_PER_HOST = 64;
const args = parseArgs(process.argv.slice(2));
// 20 clients: about where throughput stops growing on the 2-vCPU machines of bench/RESULTS.md
// (more clients add queueing to the latency, not flows per second).
const clients = Number(args.clients ?? 20);
const flows = Number(args.flows ?? 3000);
const warmup = Number(args.warmup ?? 1000);

const BOUND = `subscription($arqs: [ID!]) { acceleratorRequestBound(arqUuids: $arqs) { tag status reason } }`;
const CREATE = `mutation($name: String!) { createAcceleratorRequests(deviceProfileName: $name) { uuid } }`;
const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`;
const READ = `query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { uuid state attachHandleType attachHandleInfo } } }`;

async function main() {
  let url = args.url;
  let token = args.token;
  let adminToken = args["admin-token"];
  let mode = args.mode ?? "remote";
  const cleanups: Array<() => Promise<void>> = [];
  if (!url) {
    const env: Record<string, string> = {};
    if (args.redis) {
      const redis = await startRedisServer();
      cleanups.push(() => redis.stop());
      env.REDIS_URL = redis.url;
    }
    const server = await startBenchServer(env);
    cleanups.unshift(() => server.close());
    url = server.url;
    token = BENCH_TOKENS.service;
    adminToken = BENCH_TOKENS.admin;
    mode = args.redis ? "redis" : "embedded";
  }
  if (!token || !adminToken) throw new Error("with --url, give --token (a service token) and --admin-token (to set up hosts and a profile)");

  const admin = new BenchClient(url, adminToken);
  const profile = `bench-${randomUUID().slice(0, 8)}`;
  await admin.gql(`mutation($i: DeviceProfileInput!) { createDeviceProfile(input: $i) { uuid } }`, {
    i: { name: profile, groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] },
  });
  const hosts = Math.ceil((flows + warmup) / HANDLES_PER_HOST);
  process.stderr.write(`setup: profile ${profile}, ${hosts} hosts x ${HANDLES_PER_HOST} handles\n`);
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

  const pool = Array.from({ length: clients }, () => new BenchClient(url!, token!));
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
          if (record && (i + 1) % 500 === 0) process.stderr.write(`  ${i + 1}/${total} flows\n`);
        }
      }),
    );
  }

  const speedBefore = machineSpeedMs();
  process.stderr.write(`machine: ${speedBefore} ms for the fixed CPU task\nwarm-up: ${warmup} flows\n`);
  await run(warmup, false);
  process.stderr.write(`measuring: ${flows} flows with ${clients} concurrent clients (${mode})\n`);
  const t0 = performance.now();
  await run(flows, true);
  const seconds = (performance.now() - t0) / 1000;
  const speedAfter = machineSpeedMs();
  await Promise.all(pool.map((c) => c.close()));
  for (const c of cleanups) await c();

  latencies.sort((a, b) => a - b);
  const r = {
    mode,
    clients,
    flows,
    flows_per_s: Math.round((flows - errors) / seconds),
    bind_p50_ms: +percentile(latencies, 50).toFixed(1),
    bind_p95_ms: +percentile(latencies, 95).toFixed(1),
    bind_p99_ms: +percentile(latencies, 99).toFixed(1),
    errors,
    machine_ms: [speedBefore, speedAfter],
  };
  console.log(`mode ${mode}: ${r.flows_per_s} flows/s; bind latency p50 ${r.bind_p50_ms} ms, p95 ${r.bind_p95_ms} ms, p99 ${r.bind_p99_ms} ms; ${errors} errors; machine ${speedBefore}/${speedAfter} ms`);
  if (errorSamples.length) console.log(`error samples: ${errorSamples.join(" | ")}`);
  console.log(`BENCH ${JSON.stringify(r)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

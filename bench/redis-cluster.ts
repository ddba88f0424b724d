/**
 * Boot storm with the read models on a Redis Cluster, and a master killed midway.
 *
 *   npm run bench:redis-cluster                   # 64 clients, 3000 flows, a master killed after half
 *   npm run bench:redis-cluster -- --clients 64 --flows 3000 --warmup 2000 --no-kill
 *   npm run bench:redis-cluster -- --single       # the same flows on one redis-server, for comparison (no kill)
 *
 * Starts a throwaway cluster (three masters, three replicas, bench/lib/redis-cluster.ts, with
 * cluster-node-timeout --node-timeout-ms, default 1000) and the service in its own process with
 * REDIS_CLUSTER=true. Each client runs compute-scheduler flows as bench:api does: create ARQs,
 * subscribe, bind, wait for accelerator-request-bound, read the ARQs back. Once half the measured
 * flows have started, the master serving the ARQ model is killed with SIGKILL.
 *
 * - flows_per_s: completed flows over the measured window (the failover included);
 * - wrong_answers: reads that answered without an error but not what was acknowledged (an ARQ
 *   missing, or not BOUND after its bind completed);
 * - acked_lost: ARQs whose bind was acknowledged and that the service no longer shows at the end;
 * - failover_ready_s: from the kill to the first flow started after it that completes whole;
 *   cluster_failover_s: from the kill to the cluster serving the slot again (its replica promoted).
 * Flows that fail with an error (UNAVAILABLE while the slot has no master) are `failed`, not wrong.
 */
import { randomUUID } from "node:crypto";
import { BenchClient, parseArgs, percentile } from "./lib/client.js";
import { BENCH_TOKENS, startBenchServer } from "./lib/embedded-server.js";
import { fakeHost } from "./lib/fake-host.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { startRedisCluster, type BenchRedisCluster } from "./lib/redis-cluster.js";
import { startRedisServer } from "./lib/redis-server.js";

const args = parseArgs(process.argv.slice(2));
const clients = Number(args.clients ?? 64);
const flows = Number(args.flows ?? 3000);
// 2,000 warm-up flows: after 500 the server's code was still being optimised (about a tenth fewer
// flows/s measured, bench/RESULTS.md).
const warmup = Number(args.warmup ?? 2000);
const single = args.single !== undefined;
const kill = args["no-kill"] === undefined && !single;
const HANDLES_PER_HOST = 64;

const CREATE = `mutation($name: String!) { createAcceleratorRequests(deviceProfileName: $name) { uuid } }`;
const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`;
const READ = `query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { uuid state } } }`;
const BOUND = `subscription($arqs: [ID!]) { acceleratorRequestBound(arqUuids: $arqs) { tag status reason } }`;

interface Tally {
  done: number;
  failed: number;
  wrong: number;
  latencies: number[];
  /** instance -> the ARQs acknowledged bound to it. */
  acked: Map<string, string[]>;
  errorSamples: string[];
  wrongSamples: string[];
}

type Targets = { profile: string; rps: Array<{ uuid: string; parentProviderName: string }> };

async function setUp(url: string): Promise<Targets> {
  const admin = new BenchClient(url, BENCH_TOKENS.admin);
  const profile = `bench-${randomUUID().slice(0, 8)}`;
  await admin.gql(`mutation($i: DeviceProfileInput!) { createDeviceProfile(input: $i) { uuid } }`, {
    i: { name: profile, groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] },
  });
  const hosts = Math.ceil((flows + warmup) / HANDLES_PER_HOST) + 1;
  const prefix = `bench-${randomUUID().slice(0, 6)}`;
  for (let h = 0; h < hosts; h++) {
    await admin.gql(`mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { added } }`, {
      h: `${prefix}-${h}`,
      d: fakeHost(`${prefix}-${h}`, HANDLES_PER_HOST),
    });
  }
  const rps = (await admin.gql(`{ resourceProviders { uuid parentProviderName } }`)).resourceProviders.filter((r: { parentProviderName: string }) => r.parentProviderName.startsWith(prefix));
  await admin.close();
  process.stderr.write(`setup: profile ${profile}, ${hosts} hosts x ${HANDLES_PER_HOST} handles\n`);
  return { profile, rps };
}

/** One boot flow; returns whether it completed whole. */
async function flow(c: BenchClient, t: Targets, i: number, tally: Tally | undefined): Promise<boolean> {
  const rp = t.rps[i % t.rps.length]!;
  const instance = randomUUID();
  try {
    const uuids = ((await c.gql(CREATE, { name: t.profile })).createAcceleratorRequests as Array<{ uuid: string }>).map((a) => a.uuid);
    const events = c.waitFor<{ acceleratorRequestBound: { status: string } }>(BOUND, { arqs: uuids }, uuids.length, 15_000);
    // Refused while a slot has no master (UNAVAILABLE) before the bind answers: awaited below, or given up with the flow.
    events.catch(() => undefined);
    const t0 = performance.now();
    await c.gql(BIND, { b: uuids.map((arqUuid) => ({ arqUuid, hostname: rp.parentProviderName, deviceRpUuid: rp.uuid, instanceUuid: instance })) });
    const got = await events;
    const dt = performance.now() - t0;
    if (got.some((e) => e.acceleratorRequestBound.status !== "COMPLETED")) throw new Error("bind FAILED");
    tally?.acked.set(instance, uuids);
    const read = (await c.gql(READ, { i: instance })).acceleratorRequests.nodes as Array<{ uuid: string; state: string }>;
    if (read.length !== uuids.length || read.some((a) => a.state !== "BOUND")) {
      if (tally) {
        tally.wrong++;
        if (tally.wrongSamples.length < 5) tally.wrongSamples.push(`instance ${instance}: ${JSON.stringify(read)} after ${uuids.length} ARQs bound`);
      }
      return false;
    }
    if (tally) {
      tally.done++;
      tally.latencies.push(dt);
    }
    return true;
  } catch (err) {
    if (tally) {
      tally.failed++;
      if (tally.errorSamples.length < 5) tally.errorSamples.push((err as Error).message);
    }
    return false;
  }
}

/** The acknowledged ARQs the service no longer shows bound to their instance. */
async function ackedLost(url: string, acked: Map<string, string[]>): Promise<number> {
  const c = new BenchClient(url, BENCH_TOKENS.service);
  let lost = 0;
  try {
    for (const [instance, uuids] of acked) {
      const read = (await c.gql(READ, { i: instance })).acceleratorRequests.nodes as Array<{ uuid: string; state: string }>;
      lost += uuids.filter((u) => !read.some((a) => a.uuid === u && a.state === "BOUND")).length;
    }
  } finally {
    await c.close();
  }
  return lost;
}

interface Failover {
  killedAt?: number;
  clusterFailoverS?: number;
  readyS?: number;
}

/** Kills the master serving the ARQ model, then notes when the cluster serves its slot again. */
async function killMaster(cluster: BenchRedisCluster, f: Failover): Promise<void> {
  const key = "{arqs}:any";
  const master = await cluster.masterOf(key);
  process.stderr.write(`killing the master on :${master.port} (pid ${master.pid})\n`);
  f.killedAt = performance.now();
  await cluster.kill(master);
  await cluster.healthy(key);
  f.clusterFailoverS = +((performance.now() - f.killedAt) / 1000).toFixed(2);
  process.stderr.write(`the cluster serves the slot again after ${f.clusterFailoverS} s\n`);
}

async function storm(url: string, t: Targets, cluster: BenchRedisCluster | undefined) {
  const pool = Array.from({ length: clients }, () => new BenchClient(url, BENCH_TOKENS.service));
  const tally: Tally = { done: 0, failed: 0, wrong: 0, latencies: [], acked: new Map(), errorSamples: [], wrongSamples: [] };
  const failover: Failover = {};
  let next = 0;
  let killing: Promise<void> | undefined;
  const run = async (total: number, base: number, measured: boolean) => {
    next = 0;
    await Promise.all(
      pool.map(async (c) => {
        for (;;) {
          const i = next++;
          if (i >= total) return;
          if (measured && kill && i === Math.floor(total / 2)) killing = killMaster(cluster!, failover);
          const startedAfterKill = failover.killedAt !== undefined;
          const whole = await flow(c, t, base + i, measured ? tally : undefined);
          if (whole && startedAfterKill && failover.readyS === undefined) failover.readyS = +((performance.now() - failover.killedAt!) / 1000).toFixed(2);
        }
      }),
    );
  };
  await run(warmup, 0, false);
  const t0 = performance.now();
  await run(flows, warmup, true);
  const seconds = (performance.now() - t0) / 1000;
  await killing;
  await Promise.all(pool.map((c) => c.close()));
  return { tally, failover, seconds };
}

async function main() {
  const speedBefore = machineSpeedMs();
  const nodeTimeoutMs = Number(args["node-timeout-ms"] ?? 1000);
  const t0 = performance.now();
  const redis = single ? await startRedisServer() : undefined;
  const cluster = single ? undefined : await startRedisCluster({ nodeTimeoutMs });
  if (cluster) process.stderr.write(`cluster of 6 nodes up in ${((performance.now() - t0) / 1000).toFixed(1)} s (cluster-node-timeout ${nodeTimeoutMs} ms)\n`);
  const server = await startBenchServer(cluster ? { REDIS_URL: cluster.url, REDIS_CLUSTER: "true" } : { REDIS_URL: redis!.url });
  try {
    const targets = await setUp(server.url);
    const { tally, failover, seconds } = await storm(server.url, targets, cluster);
    const lost = await ackedLost(server.url, tally.acked);
    tally.latencies.sort((a, b) => a - b);
    const out = {
      mode: single ? "redis" : "redis-cluster",
      clients,
      flows,
      flows_per_s: Math.round(tally.done / seconds),
      failed: tally.failed,
      wrong_answers: tally.wrong,
      acked_lost: lost,
      acknowledged: [...tally.acked.values()].reduce((n, u) => n + u.length, 0),
      failover_ready_s: failover.readyS ?? null,
      cluster_failover_s: failover.clusterFailoverS ?? null,
      node_timeout_ms: nodeTimeoutMs,
      bind_p50_ms: +percentile(tally.latencies, 50).toFixed(1),
      bind_p99_ms: +percentile(tally.latencies, 99).toFixed(1),
      machine_ms: [speedBefore, machineSpeedMs()],
    };
    console.log(
      `${out.mode}, ${clients} clients: ${out.flows_per_s} flows/s, ${out.failed} failed, ${out.wrong_answers} wrong answers, ${out.acked_lost} of ${out.acknowledged} acknowledged lost; ` +
        `ready ${out.failover_ready_s} s after the kill (the cluster: ${out.cluster_failover_s} s); bind p50 ${out.bind_p50_ms} ms, p99 ${out.bind_p99_ms} ms`,
    );
    if (tally.errorSamples.length) console.log(`error samples: ${tally.errorSamples.join(" | ")}`);
    if (tally.wrongSamples.length) console.log(`wrong answers: ${tally.wrongSamples.join(" | ")}`);
    console.log(`BENCH ${JSON.stringify(out)}`);
  } finally {
    await server.close();
    await cluster?.stop();
    await redis?.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * The reliability suite's long run: the quick versions in test/reliability/, at length.
 *   1. The fuzzer: generated GraphQL requests over HTTP and WebSocket and REST requests, from every
 *      role, against the service in a child process (>= 10,000 cases; a crash is counted and the
 *      service started again).
 *   2. kill -9 during a boot storm of 64 clients, >= 10 rounds embedded and as many with the read
 *      models on Redis: acknowledged writes lost, handles allocated twice, binds left BIND_STARTED.
 *   3. 64 clients running Nova's boot flow for 10 minutes: failed flows, RSS growth after warm-up.
 *   4. The read store lost under load: as many clients reading and creating while Redis is flushed
 *      (FLUSHALL) or restarted empty, in turns: answers neither whole nor UNAVAILABLE (503), and
 *      acknowledged creations lost, are wrong answers.
 *
 *   npm run soak
 *   npm run soak -- --minutes 2 --fuzz 1000 --kill-rounds 2 --flush-rounds 4 --clients 16 --seed 42
 *
 * Progress goes to stdout as it runs; the last line is `BENCH {json}`.
 */
import { Redis } from "ioredis";
import { getSchema } from "../src/api/graphql/schema.js";
import { parseArgs } from "./lib/client.js";
import { startRedisServer } from "./lib/redis-server.js";
import { prepareBootTargets } from "./lib/reliability/boot-flows.js";
import { fuzz, type FuzzReport, type Transport } from "./lib/reliability/fuzz.js";
import { rootFields } from "./lib/reliability/graphql-cases.js";
import { kill9Round } from "./lib/reliability/kill9-rounds.js";
import { seededRandom } from "./lib/seeded-random.js";
import { lossUnderLoad, prepareLossTruth } from "./lib/reliability/read-store-flush.js";
import { seedPool } from "./lib/reliability/seed-pool.js";
import { ServiceProcess } from "./lib/reliability/service-process.js";
import { steadySoak } from "./lib/reliability/steady-soak.js";

const args = parseArgs(process.argv.slice(2));
const minutes = Number(args.minutes ?? 10);
const clients = Number(args.clients ?? 64);
const fuzzPerTransport = Number(args.fuzz ?? 4_000);
const killRounds = Number(args["kill-rounds"] ?? 10);
const flushRounds = Number(args["flush-rounds"] ?? 10);
const seed = Number(args.seed ?? Math.floor(Math.random() * 2 ** 31));
const cli = new URL("../src/cli/index.js", import.meta.url).pathname;
const STORM_BIND_TIMEOUT_S = 5;

const log = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** FLUSHALL and a restart of redis-server without its data, in turns, under load. */
async function runFlush(): Promise<{ rounds: number; wrongAnswers: number; notRecovered: number }> {
  const redis = await startRedisServer();
  const service = new ServiceProcess({ cli, env: { REDIS_URL: redis.url } });
  const total = { rounds: 0, wrongAnswers: 0, notRecovered: 0 };
  const flushall = async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 3 });
    try {
      await client.flushall();
    } finally {
      client.disconnect();
    }
  };
  try {
    await service.start();
    const truth = await prepareLossTruth(service.url);
    for (let round = 1; round <= flushRounds; round++) {
      const loss = round % 2 === 1 ? { name: "FLUSHALL", run: flushall } : { name: "restart", run: () => redis.restart() };
      const r = await lossUnderLoad({ url: service.url, truth, clients, loss, recoverWithinMs: 300_000 });
      total.rounds++;
      total.wrongAnswers += r.wrongAnswers;
      if (!r.recovered) total.notRecovered++;
      log(`read store lost ${round}/${flushRounds} (${r.loss}): answers ${JSON.stringify(r.answers)}, ${r.acknowledgedCreates} creations acknowledged, ${r.lostCreates} lost; ${r.recovered ? "recovered" : "NOT recovered"}`);
      for (const w of r.samples.slice(0, 5)) log(`  ${w}`);
      if (service.crashed) throw new Error(`the service crashed:\n${service.tail}`);
    }
  } finally {
    await service.remove();
    await redis.stop();
  }
  return total;
}

async function runFuzz(): Promise<{ cases: number; internalErrors: number; crashes: number; byKind: Record<string, number> }> {
  const schema = await getSchema();
  const service = new ServiceProcess({ cli });
  const total = { cases: 0, internalErrors: 0, crashes: 0, byKind: {} as Record<string, number> };
  try {
    await service.start();
    const pool = await seedPool(service.url);
    for (const transport of ["http", "ws", "rest"] as Transport[]) {
      const report: FuzzReport = await fuzz({
        url: service.url,
        schema,
        pool,
        seed,
        cases: fuzzPerTransport,
        transport,
        concurrency: 4,
        alive: async () => !service.crashed && (await service.healthy()),
        revive: async () => {
          log(`fuzz ${transport}: the service stopped (${service.crashed ? "crashed" : "not answering"}); starting it again\n${service.tail}`);
          await service.stop();
          await service.start();
        },
        onProgress: (done, r) => {
          if (done % 1_000 === 0 || done === fuzzPerTransport) log(`fuzz ${transport}: ${done}/${fuzzPerTransport} cases, ${r.internalErrors} internal errors, ${r.findings.length} findings, ${r.crashes} crashes`);
        },
      });
      total.cases += report.cases;
      total.internalErrors += report.internalErrors;
      total.crashes += report.crashes;
      if (transport !== "rest") {
        const untried = rootFields(schema).map(({ kind, field }) => `${kind}.${field.name}`).filter((t) => !report.targets[t]);
        log(`fuzz ${transport}: every root field tried but ${untried.length} (${untried.join(", ") || "none"})`);
      }
      for (const [kind, n] of Object.entries(report.byKind)) total.byKind[`${transport} ${kind}`] = n;
      for (const f of report.findings.slice(0, 3)) log(`fuzz ${transport} finding #${f.index}: ${f.violations.map((v) => `${v.kind}: ${v.detail}`).join("; ").slice(0, 400)}\n    request: ${f.request.slice(0, 400)}`);
    }
  } finally {
    await service.remove();
  }
  return total;
}

async function runKill9(mode: "embedded" | "redis"): Promise<{ rounds: number; lost: number; doubled: number; stuck: number }> {
  const redis = mode === "redis" ? await startRedisServer() : undefined;
  const service = new ServiceProcess({ cli, env: { BIND_TIMEOUT_S: String(STORM_BIND_TIMEOUT_S), ...(redis ? { REDIS_URL: redis.url } : {}) } });
  const total = { rounds: 0, lost: 0, doubled: 0, stuck: 0 };
  try {
    await service.start();
    const targets = await prepareBootTargets(service.url, "storm", 8, 16);
    const random = seededRandom(seed + (mode === "redis" ? 1 : 0));
    for (let round = 1; round <= killRounds; round++) {
      const r = await kill9Round({ service, profile: "storm", targets, clients, bindTimeoutS: STORM_BIND_TIMEOUT_S, stormMs: [1_000, 6_000], random }, round);
      total.rounds++;
      total.lost += r.ackedLost;
      total.doubled += r.doubleAllocations;
      total.stuck += r.stuckBindStarted;
      log(`kill -9 ${mode} round ${round}/${killRounds}: killed after ${r.stormMs} ms, ${r.flows} flows, ${r.acknowledged} ARQs acknowledged; lost ${r.ackedLost}, doubled ${r.doubleAllocations}, stuck ${r.stuckBindStarted}`);
      for (const p of r.problems.slice(0, 5)) log(`  ${p}`);
    }
  } finally {
    await service.remove();
    await redis?.stop();
  }
  return total;
}

async function main() {
  log(`seed ${seed}; fuzz ${fuzzPerTransport} cases per transport; ${killRounds} kill -9 rounds per mode; ${flushRounds} read store losses; ${clients} clients for ${minutes} min`);
  const fuzzed = await runFuzz();
  log(`fuzz done: ${fuzzed.cases} cases, ${fuzzed.internalErrors} internal errors, ${fuzzed.crashes} crashes; violations by kind ${JSON.stringify(fuzzed.byKind)}`);

  const kills = [await runKill9("embedded"), await runKill9("redis")];
  const kill = kills.reduce((a, b) => ({ rounds: a.rounds + b.rounds, lost: a.lost + b.lost, doubled: a.doubled + b.doubled, stuck: a.stuck + b.stuck }));

  const flush = await runFlush();
  log(`read store loss done: ${flush.rounds} rounds, ${flush.wrongAnswers} wrong answers, ${flush.notRecovered} rounds not recovered`);

  const service = new ServiceProcess({ cli });
  let soak;
  try {
    await service.start();
    soak = await steadySoak(service, { clients, minutes, hosts: 8, handles: 16, onProgress: log });
  } finally {
    await service.remove();
  }
  for (const e of soak.errors.slice(0, 5)) log(`soak failure: ${e}`);
  log(`soak done: ${soak.flows} flows, ${soak.failedFlows} failed; after warm-up (MiB): RSS ${JSON.stringify(soak.rssMiB)}, anonymous ${JSON.stringify(soak.anonMiB)}`);

  const bench = {
    fuzz_cases: fuzzed.cases,
    internal_errors: fuzzed.internalErrors,
    crashes: fuzzed.crashes,
    kill9_rounds: kill.rounds,
    acked_lost: kill.lost,
    double_allocations: kill.doubled,
    stuck_bind_started: kill.stuck,
    wrong_answers_after_flush: flush.wrongAnswers,
    flush_rounds: flush.rounds,
    flush_not_recovered: flush.notRecovered,
    soak_clients: soak.clients,
    soak_minutes: soak.minutes,
    failed_flows: soak.failedFlows,
    rss_growth_pct: soak.rssGrowthPct,
    rss_anon_growth_pct: soak.anonGrowthPct,
    rss_file_mib: soak.fileMiB,
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

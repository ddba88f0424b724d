/**
 * kill -9 during a boot storm, quick: clients run Nova's boot flow against the real service in a
 * child process, which is killed with SIGKILL at a random moment and started again on the same
 * DATA_DIR; 2 rounds embedded (LMDB log, read models in memory) and 1 with the read models on a
 * real redis-server. After each restart: no acknowledged write lost, nothing left BIND_STARTED
 * past BIND_TIMEOUT_S, no attach handle allocated twice. `npm run soak` runs >= 10 rounds of 64 clients.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareBootTargets } from "../../bench/lib/reliability/boot-flows.js";
import { kill9Round, type RoundResult } from "../../bench/lib/reliability/kill9-rounds.js";
import { seededRandom } from "../../bench/lib/seeded-random.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { buildCli, type BuiltCli } from "../support/cli.js";
import { startRedis, type TestRedis } from "../support/redis.js";

const SEED = Number(process.env.KILL9_SEED ?? Math.floor(Math.random() * 2 ** 31));
const BIND_TIMEOUT_S = 3;
const CLIENTS = 8;

let built: BuiltCli;
let redis: TestRedis;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  [built, redis] = await Promise.all([buildCli(), startRedis()]);
}, 120_000);
afterAll(async () => {
  for (const s of services) await s.remove();
  await redis?.stop();
  await built?.remove();
});

async function rounds(env: Record<string, string>, count: number): Promise<RoundResult[]> {
  const service = new ServiceProcess({ cli: built.cli, env: { BIND_TIMEOUT_S: String(BIND_TIMEOUT_S), ...env } });
  services.push(service);
  await service.start();
  const targets = await prepareBootTargets(service.url, "storm", 2, 8);
  const random = seededRandom(SEED);
  const results: RoundResult[] = [];
  for (let round = 1; round <= count; round++) {
    const r = await kill9Round({ service, profile: "storm", targets, clients: CLIENTS, bindTimeoutS: BIND_TIMEOUT_S, stormMs: [500, 2_500], random }, round);
    console.log(`kill -9 round ${round}${env.REDIS_URL ? " (Redis)" : ""}: killed after ${r.stormMs} ms, ${r.flows} flows, ${r.acknowledged} ARQs acknowledged`);
    results.push(r);
  }
  return results;
}

function expectClean(results: RoundResult[]) {
  const why = `KILL9_SEED=${SEED}: ${JSON.stringify(results, null, 1)}`;
  for (const r of results) {
    expect(r.acknowledged, why).toBeGreaterThan(0);
    expect(r.ackedLost, why).toBe(0);
    expect(r.doubleAllocations, why).toBe(0);
    expect(r.stuckBindStarted, why).toBe(0);
  }
}

describe("kill -9 during a boot storm", () => {
  it("embedded: 2 rounds lose no acknowledged write, leave no bind hanging, allocate no handle twice", async () => {
    expectClean(await rounds({}, 2));
  }, 600_000);

  it("read models on Redis: 1 round, the same", async () => {
    expectClean(await rounds({ REDIS_URL: redis.url }, 1));
  }, 600_000);
});

/**
 * The read store lost under load, quick: readers (GraphQL and REST) and writers (create an ARQ,
 * read it back) run against the real service in a child process, its read models on a real
 * redis-server, while Redis is flushed (FLUSHALL) and then restarted empty. Every answer is
 * whole or UNAVAILABLE (503, Retry-After), never wrong; no acknowledged creation is lost; the
 * answers are whole again afterwards. test/api/read-store-loss.test.ts holds the in-process
 * version (and the embedded store's); `npm run soak` runs more rounds with more clients.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lossUnderLoad, prepareLossTruth, type LossRound, type LossTruth } from "../../bench/lib/reliability/read-store-flush.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { buildCli, type BuiltCli } from "../support/cli.js";
import { startRedis, type TestRedis } from "../support/redis.js";

let built: BuiltCli;
let redis: TestRedis;
let service: ServiceProcess;
let truth: LossTruth;

beforeAll(async () => {
  [built, redis] = await Promise.all([buildCli(), startRedis()]);
  service = new ServiceProcess({ cli: built.cli, env: { REDIS_URL: redis.url } });
  await service.start();
  truth = await prepareLossTruth(service.url);
}, 240_000);
afterAll(async () => {
  await service?.remove();
  await redis?.stop();
  await built?.remove();
});

function expectNoWrongAnswer(r: LossRound) {
  const why = JSON.stringify(r, null, 1);
  console.log(`${r.loss}: ${JSON.stringify(r.answers)}, ${r.acknowledgedCreates} creations acknowledged, ${r.wholeAfterLoss} whole answers after the loss`);
  expect(r.wrongAnswers, why).toBe(0);
  expect(r.lostCreates, why).toBe(0);
  expect(r.recovered, why).toBe(true);
  expect(r.acknowledgedCreates, why).toBeGreaterThan(0);
  expect(service.crashed, service.tail).toBe(false);
}

describe("the read store lost under load (Redis)", () => {
  it("FLUSHALL: whole or UNAVAILABLE, never wrong, then whole again", async () => {
    const flusher = redis.client();
    expectNoWrongAnswer(await lossUnderLoad({ url: service.url, truth, clients: 8, loss: { name: "FLUSHALL", run: async () => void (await flusher.flushall()) } }));
  }, 300_000);

  it("redis-server restarted empty: the same", async () => {
    expectNoWrongAnswer(await lossUnderLoad({ url: service.url, truth, clients: 8, loss: { name: "restart", run: () => redis.restart() } }));
  }, 300_000);
});

/**
 * A Redis Cluster master killed under load: the service in a child process keeps its read models
 * on a real three-master, three-replica cluster (REDIS_CLUSTER=true) while readers (GraphQL and
 * REST) and writers (create an ARQ, read it back at once) run; the master holding the ARQ model is
 * killed with SIGKILL and its replica takes over. Every answer is whole or UNAVAILABLE (503,
 * Retry-After), never wrong; no acknowledged creation is lost; the answers are whole again and
 * /readyz says ready afterwards (judged as read-store-flush.test.ts judges a flushed Redis).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lossUnderLoad, prepareLossTruth, type LossTruth } from "../../bench/lib/reliability/read-store-flush.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { buildCli, type BuiltCli } from "../support/cli.js";
import { startTestCluster, type TestRedisCluster } from "../support/redis-cluster.js";

let built: BuiltCli;
let cluster: TestRedisCluster;
let service: ServiceProcess;
let truth: LossTruth;

beforeAll(async () => {
  [built, cluster] = await Promise.all([buildCli(), startTestCluster()]);
  service = new ServiceProcess({ cli: built.cli, env: { REDIS_URL: cluster.url, REDIS_CLUSTER: "true" } });
  await service.start();
  truth = await prepareLossTruth(service.url);
}, 240_000);
afterAll(async () => {
  await service?.remove();
  await cluster?.stop();
  await built?.remove();
});

describe("a Redis Cluster master killed under load", () => {
  it("its replica takes over: whole or UNAVAILABLE, never wrong, no acknowledged creation lost, then whole and ready again", async () => {
    const arqsKey = "{arqs}:any";
    const master = await cluster.server.masterOf(arqsKey);
    const kill = async () => {
      await cluster.server.kill(master);
      await cluster.server.healthy(arqsKey);
    };
    const r = await lossUnderLoad({ url: service.url, truth, clients: 8, loss: { name: `master :${master.port} killed`, run: kill } });
    const why = JSON.stringify(r, null, 1);
    console.log(`${r.loss}: ${JSON.stringify(r.answers)}, ${r.acknowledgedCreates} creations acknowledged, ${r.wholeAfterLoss} whole answers after the failover`);
    expect((await cluster.server.masterOf(arqsKey)).port).not.toBe(master.port);
    expect(r.wrongAnswers, why).toBe(0);
    expect(r.lostCreates, why).toBe(0);
    expect(r.recovered, why).toBe(true);
    expect(r.acknowledgedCreates, why).toBeGreaterThan(0);
    expect(service.crashed, service.tail).toBe(false);
  }, 300_000);
});

/**
 * The fuzzer, quick: a few hundred generated requests per transport (GraphQL over HTTP, over
 * WebSocket, and the Cyborg v2 REST API), from every role's token, an unknown one and none,
 * against the real service in a child process. No answer may be an internal error, carry stack
 * text, or lack its code; the process must still answer /healthz. A failure prints the seed
 * (FUZZ_SEED=<seed> npx vitest run test/reliability reproduces it). `npm run soak` runs >= 10,000.
 */
import type { GraphQLSchema } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeFindings, fuzz, type Transport } from "../../bench/lib/reliability/fuzz.js";
import type { Pool } from "../../bench/lib/reliability/hostile-values.js";
import { seedPool } from "../../bench/lib/reliability/seed-pool.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { getSchema } from "../../src/api/graphql/schema.js";
import { buildCli, type BuiltCli } from "../support/cli.js";

const CASES = Number(process.env.FUZZ_CASES ?? 300);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

let built: BuiltCli;
let service: ServiceProcess;
let schema: GraphQLSchema;
let pool: Pool;

beforeAll(async () => {
  [built, schema] = await Promise.all([buildCli(), getSchema()]);
  service = new ServiceProcess({ cli: built.cli });
  await service.start();
  pool = await seedPool(service.url);
}, 240_000);
afterAll(async () => {
  await service?.remove();
  await built?.remove();
});

describe.each<Transport>(["http", "ws", "rest"])("fuzz over %s", (transport) => {
  it(`${CASES} generated requests: typed errors only, no stack text, the process still up`, async () => {
    const report = await fuzz({ url: service.url, schema, pool, seed: SEED, cases: CASES, transport, alive: () => service.healthy() });
    expect(report.cases).toBe(CASES);
    expect(report.findings.length, describeFindings(report)).toBe(0);
    expect(report.crashes).toBe(0);
    expect(service.crashed, service.tail).toBe(false);
    expect(await service.healthy()).toBe(true);
  }, 600_000);
});


/**
 * 1,000 binds at once racing for 16 attach handles (a host with 16 devices of one handle each),
 * each ARQ to its own instance: exactly 16 BOUND, each on its own handle; every other bind
 * BIND_FAILED with a reason, or refused at once with a typed error that wrote nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindRace, RACE_HANDLES } from "../../bench/lib/reliability/bind-race.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { buildCli, type BuiltCli } from "../support/cli.js";

const BINDS = Number(process.env.RACE_BINDS ?? 1_000);
const BIND_TIMEOUT_S = 5;
/** Typed refusals a bind may meet under contention. */
const TYPED = new Set(["CONFLICT", "BAD_USER_INPUT", "RATE_LIMITED", "QUOTA_EXCEEDED"]);

let built: BuiltCli;
let service: ServiceProcess;

beforeAll(async () => {
  built = await buildCli();
  service = new ServiceProcess({ cli: built.cli, env: { BIND_TIMEOUT_S: String(BIND_TIMEOUT_S) } });
  await service.start();
}, 240_000);
afterAll(async () => {
  await service?.remove();
  await built?.remove();
});

describe("binds racing for scarce handles", () => {
  it(`${BINDS} concurrent binds for ${RACE_HANDLES} handles: exactly ${RACE_HANDLES} BOUND, the rest failed with a reason or refused`, async () => {
    const r = await bindRace(service.url, BINDS, BIND_TIMEOUT_S);
    const why = JSON.stringify(r);
    console.log(`bind race: ${why}`);
    expect(r.bound, why).toBe(RACE_HANDLES);
    expect(r.handlesHeldTwice, why).toBe(0);
    expect(r.stuckBindStarted, why).toBe(0);
    expect(r.failedWithoutReason, why).toBe(0);
    expect(r.other, why).toEqual({});
    const refusals = Object.values(r.refused).reduce((a, b) => a + b, 0);
    for (const code of Object.keys(r.refused)) expect(TYPED.has(code), why).toBe(true);
    expect(r.untouched, why).toBe(refusals);
    expect(r.bound + r.failedWithReason + refusals, why).toBe(BINDS);
    expect(service.crashed).toBe(false);
  }, 600_000);
});

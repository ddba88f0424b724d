/**
 * Binds at once racing for 16 attach handles (a host with 16 devices of one handle each), each ARQ
 * to its own instance: exactly 16 BOUND, each on its own handle; every other bind BIND_FAILED with
 * a reason, or refused at once with a typed error that wrote nothing. In one process (1,000 binds),
 * and through two API workers (300 binds), where each worker decides on its own read of the log
 * and only the primary's append at the host stream's revision settles who wins.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindRace, RACE_HANDLES } from "../../bench/lib/reliability/bind-race.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { buildCli, type BuiltCli } from "../support/cli.js";

const BIND_TIMEOUT_S = 5;
/** Typed refusals a bind may meet under contention. */
const TYPED = new Set(["CONFLICT", "BAD_USER_INPUT", "RATE_LIMITED", "QUOTA_EXCEEDED"]);

describe.each([
  { name: "binds racing for scarce handles", binds: Number(process.env.RACE_BINDS ?? 1_000), env: {} as Record<string, string> },
  { name: "binds racing through two API workers", binds: Number(process.env.RACE_BINDS ?? 300), env: { API_WORKERS: "2" } },
])("$name", ({ binds, env }) => {
  let built: BuiltCli;
  let service: ServiceProcess;

  beforeAll(async () => {
    built = await buildCli();
    service = new ServiceProcess({ cli: built.cli, env: { ...env, BIND_TIMEOUT_S: String(BIND_TIMEOUT_S) } });
    await service.start();
  }, 240_000);
  afterAll(async () => {
    await service?.remove();
    await built?.remove();
  });

  it(`${binds} concurrent binds for ${RACE_HANDLES} handles: exactly ${RACE_HANDLES} BOUND, none held twice, the rest failed with a reason or refused`, async () => {
    const r = await bindRace(service.url, binds, BIND_TIMEOUT_S);
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
    expect(r.bound + r.failedWithReason + refusals, why).toBe(binds);
    expect(service.crashed).toBe(false);
  }, 600_000);
});

/**
 * Binds racing for scarce handles through two API workers: each worker decides on its own read of
 * the log, and only the primary's append at the host stream's revision settles who wins. Exactly
 * as many BOUND as there are handles, never one handle twice; every other bind failed with a
 * reason or was refused with a typed error that wrote nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindRace, RACE_HANDLES } from "../../bench/lib/reliability/bind-race.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { buildCli, type BuiltCli } from "../support/cli.js";

const BINDS = Number(process.env.RACE_BINDS ?? 300);
const BIND_TIMEOUT_S = 5;
const TYPED = new Set(["CONFLICT", "BAD_USER_INPUT", "RATE_LIMITED", "QUOTA_EXCEEDED"]);

let built: BuiltCli;
let service: ServiceProcess;

beforeAll(async () => {
  built = await buildCli();
  service = new ServiceProcess({ cli: built.cli, env: { API_WORKERS: "2", BIND_TIMEOUT_S: String(BIND_TIMEOUT_S) } });
  await service.start();
}, 240_000);
afterAll(async () => {
  await service?.remove();
  await built?.remove();
});

describe("binds racing through two API workers", () => {
  it(`${BINDS} concurrent binds for ${RACE_HANDLES} handles: exactly ${RACE_HANDLES} BOUND, none held twice`, async () => {
    const r = await bindRace(service.url, BINDS, BIND_TIMEOUT_S);
    const why = JSON.stringify(r);
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

/**
 * What an operator sees on /readyz while the service's subscriptions to the log are lost: an
 * `outage` on each projection and on the binder under `followers` ("retrying"), gone once the log
 * answers again; and the service goes on applying what was written meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { DroppingStore } from "../support/dropping-store.js";

interface Status {
  name: string;
  state: string;
  outage?: { attempts: number; lastError: string };
}

let t: TestService;
const store = new DroppingStore(new MemoryEventStore());
beforeAll(async () => {
  t = await startTestService({ overrides: { store } });
});
afterAll(() => t.close());

async function readyz(): Promise<{ projections: Status[]; followers: Status[] }> {
  return (await (await fetch(new URL("/readyz", t.url), { headers: { authorization: `Bearer ${TOKENS.admin.token}` } })).json()) as never;
}

describe("/readyz during a lost subscription to the event log", () => {
  it("shows the outage on the projections and the binder, then clears it", async () => {
    expect((await readyz()).followers.find((f) => f.name === "binder")).toMatchObject({ state: "live" });
    store.down();
    await expect.poll(async () => (await readyz()).followers.find((f) => f.name === "binder"), { timeout: 10_000 }).toMatchObject({ state: "retrying", outage: { lastError: "event store unreachable" } });
    await expect.poll(async () => (await readyz()).projections.every((p) => p.outage !== undefined), { timeout: 10_000 }).toBe(true);

    store.up();
    await expect.poll(async () => (await readyz()).followers.find((f) => f.name === "binder"), { timeout: 10_000 }).toMatchObject({ state: "live" });
    const after = await readyz();
    expect(after.followers.find((f) => f.name === "binder")!.outage).toBeUndefined();
    await expect.poll(async () => (await readyz()).projections.every((p) => p.outage === undefined), { timeout: 10_000 }).toBe(true);
    // The service reads the log again: a write shows in the read models (the mutation waits for them).
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "after-outage", groups: [{ "resources:FPGA": "1" }] } });
  }, 30_000);
});

/**
 * The nova role in the composed service: NOVA_URL makes `startService` run the notifier; binds
 * made over REST (as Nova makes them) and over GraphQL reach Nova's os-server-external-events,
 * the events of one instance in one request; /readyz shows the notifier under `followers`.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { collect, FAKE_HOST_DEVICES, TOKENS } from "../api/harness.js";
import * as op from "../api/operations.js";
import { buildCli, runCli } from "../support/cli.js";
import { graphqlBind, novaFollower, requestsFor, restBind, serviceWithNova, SLOW, WAIT } from "./support.js";

const ctx = serviceWithNova();

describe("the nova role", SLOW, () => {
  it("tells Nova of a bind made over REST: one request with the instance's events, microversion 2.82, the token", async () => {
    const { t, nova, rp } = ctx;
    const instance = randomUUID();
    const [a, b] = await restBind(t, rp, "two", instance);
    await expect.poll(() => requestsFor(nova, instance), WAIT).toEqual([[`${a} completed`, `${b} completed`]]);
    const call = nova.calls.find((c) => c.events.some((e) => e.server_uuid === instance))!;
    expect(call.events).toEqual([
      { name: "accelerator-request-bound", server_uuid: instance, tag: a, status: "completed" },
      { name: "accelerator-request-bound", server_uuid: instance, tag: b, status: "completed" },
    ]);
    expect(call.headers).toMatchObject({ "x-auth-token": nova.token, "x-openstack-nova-api-version": "2.82", "openstack-api-version": "compute 2.82", "content-type": "application/json" });
    expect(call.status).toBe(200);
  });

  it("tells Nova of a bind made over GraphQL, while the GraphQL subscriber is told too", async () => {
    const { t, nova, rp } = ctx;
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    await new Promise((r) => setTimeout(r, 100)); // let the subscription open (it also checks the read model)
    const arqs = await graphqlBind(t, rp, "two", instance);
    expect(arqs.map((a) => a.state)).toEqual(["BOUND", "BOUND"]);
    const events = await sub.next(2);
    sub.unsubscribe();
    expect(events.map((e) => e.acceleratorRequestBound.status)).toEqual(["COMPLETED", "COMPLETED"]);
    await expect.poll(() => requestsFor(nova, instance), WAIT).toEqual([arqs.map((a) => `${a.uuid} completed`)]);
  });

  it("tells Nova of a bind that fails, as failed", async () => {
    const { t, nova } = ctx;
    const instance = randomUUID();
    const [arq] = await restBind(t, randomUUID(), "one", instance); // an RP Cyborg does not know
    await expect.poll(() => requestsFor(nova, instance), WAIT).toEqual([[`${arq} failed`]]);
  });

  it("sends nothing when a device is lost under a bound ARQ (BOUND -> BIND_FAILED is no bind)", async () => {
    const { t, nova, rp } = ctx;
    const host = "compute2";
    const devices = FAKE_HOST_DEVICES(2).map((d) => ({ ...d, deployables: d.deployables.map((dep) => ({ ...dep, name: `${host}_FakeDevice` })) }));
    await t.ok("admin", op.REPORT, { hostname: host, devices });
    const rp2 = (await t.ok("service", op.RPS, { hostname: host })).resourceProviders[0].uuid as string;
    const instance = randomUUID();
    const [arq] = await restBind(t, rp2, "one", instance, host);
    await expect.poll(() => requestsFor(nova, instance), WAIT).toEqual([[`${arq} completed`]]);

    await t.ok("admin", op.REPORT, { hostname: host, devices: [] });
    await expect.poll(async () => (await t.ok("service", op.ARQS_OF, { instance })).acceleratorRequests.nodes[0].state, WAIT).toBe("BIND_FAILED");
    // A later bind reaches Nova, and the notifier has handled everything before it: still one request for the instance.
    const fence = randomUUID();
    await restBind(t, rp, "one", fence);
    await expect.poll(() => requestsFor(nova, fence).length, WAIT).toBe(1);
    await expect.poll(async () => (await novaFollower(t))?.lagEvents, WAIT).toBe(0);
    expect(requestsFor(nova, instance)).toEqual([[`${arq} completed`]]);
  });

  it("shows the notifier under followers on /readyz", async () => {
    const { t, nova } = ctx;
    await expect.poll(() => novaFollower(t), WAIT).toMatchObject({ name: "nova-notifier", state: "live", novaUrl: nova.url, lagEvents: 0, heldEvents: 0, retries: 0 });
    const f = (await novaFollower(t))!;
    expect(f.delivered).toBeGreaterThanOrEqual(4);
    expect(f.checkpoint).toMatch(/^\d+$/);
  });

  it("shows the notifier in `cyborg-es projections status`", async () => {
    const { t } = ctx;
    const built = await buildCli();
    try {
      const r = await runCli(built.cli, ["projections", "status", "--url", t.url, "--json"], { env: { CYBORG_TOKEN: TOKENS.admin.token } });
      expect(r.code, r.stderr).toBe(0);
      const rows = JSON.parse(r.stdout) as Array<{ name: string; state: string; lagEvents: number }>;
      expect(rows.find((row) => row.name === "nova-notifier")).toMatchObject({ state: "live", lagEvents: 0 });
    } finally {
      await built.remove();
    }
  });
});

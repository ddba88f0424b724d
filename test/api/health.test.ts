import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, startTestService, TOKENS, type TestService } from "./harness.js";
import * as op from "./operations.js";

describe("health endpoints", () => {
  let t: TestService;
  beforeAll(async () => (t = await startTestService()));
  afterAll(() => t?.close());
  const base = () => t.url.replace(/\/graphql$/, "");

  it("/healthz answers ok without authentication", async () => {
    const res = await fetch(`${base()}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("/readyz answers ready or not to anyone, with no figures", async () => {
    const res = await fetch(`${base()}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready" });
    const reader = await fetch(`${base()}/readyz`, { headers: { authorization: `Bearer ${TOKENS.reader.token}` } });
    expect(await reader.json()).toEqual({ status: "ready" });
  });

  it("/metrics on the API's port needs an admin token", async () => {
    const anonymous = await fetch(`${base()}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toMatch(/admin token.*METRICS_PORT/);
    const admin = await fetch(`${base()}/metrics`, { headers: { authorization: `Bearer ${TOKENS.admin.token}` } });
    expect(admin.status).toBe(200);
    expect(await admin.text()).toMatch(/cyborg_/);
  });

  it("/readyz reports to an admin the event log, each projection and the open bind subscriptions", async () => {
    const ready = async () => {
      const res = await fetch(`${base()}/readyz`, { headers: { authorization: `Bearer ${TOKENS.admin.token}` } });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const before = await ready();
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ status: "ready", eventLog: "lmdb", boundSubscriptions: 0 });
    expect(before.body.projections.map((p: { name: string }) => p.name).sort()).toEqual(
      ["arqs", "audit", "deployables", "device-profiles", "device-tree", "resource-providers"],
    );
    expect(before.body.projections.every((p: { state: string }) => p.state === "live")).toBe(true);

    const sub = collect(t.ws("service"), op.BOUND, { instance: randomUUID() });
    const deadline = Date.now() + 5_000;
    while ((await ready()).body.boundSubscriptions !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect((await ready()).body.boundSubscriptions).toBe(1);
    sub.unsubscribe();
    while ((await ready()).body.boundSubscriptions !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect((await ready()).body.boundSubscriptions).toBe(0);
  });

  it("unknown paths get 404 with a hint", async () => {
    const res = await fetch(`${base()}/nope?x=1`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "no route /nope; GraphQL is at /graphql, the console at /console" });
  });
});

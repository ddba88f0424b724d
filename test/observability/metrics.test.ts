import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { getHeapStatistics } from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projections } from "../../projections/index.js";
import { freePort } from "../../bench/lib/redis-server.js";
import { collect, FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { parse } from "./exposition.js";

/** Every metric an operator relies on, with its type (docs/operations.md: "Metrics"). */
export const EXPECTED_METRICS = {
  cyborg_graphql_operations_total: "counter",
  cyborg_graphql_operation_duration_seconds: "histogram",
  cyborg_rest_operations_total: "counter",
  cyborg_rest_operation_duration_seconds: "histogram",
  cyborg_eventstore_append_duration_seconds: "histogram",
  cyborg_eventstore_appended_events_total: "counter",
  cyborg_eventstore_conflicts_total: "counter",
  cyborg_projection_lag_events: "gauge",
  cyborg_projection_lag_seconds: "gauge",
  cyborg_projection_live: "gauge",
  cyborg_bind_duration_seconds: "histogram",
  cyborg_read_your_writes_wait_seconds: "histogram",
  cyborg_projection_batch_duration_seconds: "histogram",
  cyborg_binds_in_flight: "gauge",
  cyborg_subscriptions_open: "gauge",
  cyborg_agent_reports_total: "counter",
  cyborg_invariant_repairs_total: "counter",
  cyborg_capacity_total: "gauge",
  cyborg_capacity_used: "gauge",
  cyborg_capacity_reserved: "gauge",
  cyborg_devices: "gauge",
  cyborg_device_state_duration_seconds: "histogram",
  cyborg_agent_live: "gauge",
  cyborg_agent_silent_seconds: "gauge",
  process_cpu_seconds_total: "counter",
  process_resident_memory_bytes: "gauge",
  nodejs_eventloop_lag_seconds: "gauge",
  nodejs_heap_size_used_bytes: "gauge",
  cyborg_heap_size_limit_bytes: "gauge",
} as const;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe("GET /metrics after a scheduler's flow", () => {
  let t: TestService;
  beforeAll(async () => (t = await startTestService()));
  afterAll(() => t?.close());
  const scrape = async () => {
    const res = await fetch(t.url.replace(/\/graphql$/, "/metrics"), { headers: { authorization: `Bearer ${TOKENS.admin.token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return parse(await res.text());
  };

  /** One ARQ of the profile bound on compute1's first provider, its bound event received; the subscription is left open. */
  const bindOne = async (profile: string) => {
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0];
    const arqs = (await t.ok("service", op.CREATE_ARQS, { name: profile })).createAcceleratorRequests;
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: arqs[0].uuid, hostname: "compute1", deviceRpUuid: rp.uuid, instanceUuid: instance }] });
    await sub.next(1);
    return { instance, sub };
  };

  it("names every metric with its type, counts the flow, and puts no id in a label", async () => {
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] } });
    const bad = await t.gql("admin", op.CREATE_PROFILE, { input: { name: "bad", groups: [{ "resources:FPGA": "0" }] } });
    expect(bad.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    await t.ok("agent", op.CONFIRM, { hostname: "compute1", digest: `v1:${"0".repeat(64)}` });
    const { sub } = await bindOne("fpga-1");

    const m = await scrape();
    for (const [name, type] of Object.entries(EXPECTED_METRICS)) expect(m.types.get(name), name).toBe(type);
    expect(m.value("cyborg_graphql_operations_total", { operation: "bindAcceleratorRequests", type: "mutation", code: "OK" })).toBe(1);
    expect(m.value("cyborg_graphql_operations_total", { operation: "createDeviceProfile", code: "BAD_USER_INPUT" })).toBe(1);
    expect(m.value("cyborg_graphql_operation_duration_seconds_count", { operation: "reportHostInventory" })).toBe(2);
    expect(m.value("cyborg_agent_reports_total", { result: "written" })).toBe(1);
    expect(m.value("cyborg_agent_reports_total", { result: "unchanged" })).toBe(1);
    expect(m.value("cyborg_agent_reports_total", { result: "not_confirmed" })).toBe(1);
    expect(m.value("cyborg_eventstore_append_duration_seconds_count", { result: "ok" })).toBeGreaterThanOrEqual(4);
    expect(m.value("cyborg_eventstore_appended_events_total")).toBeGreaterThan(10);
    expect(m.value("cyborg_bind_duration_seconds_count", { outcome: "bound" })).toBe(1);
    // Every write that succeeded waited for the models (a profile, two reports, the ARQ's creation, its bind); the refused one and the confirmation (it writes nothing) did not.
    expect(m.value("cyborg_read_your_writes_wait_seconds_count")).toBe(5);
    expect(m.value("cyborg_projection_batch_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(m.value("cyborg_binds_in_flight")).toBe(0);
    // The test process's own limit (vitest's fork runs node's default).
    expect(m.value("cyborg_heap_size_limit_bytes")).toBe(getHeapStatistics().heap_size_limit);
    expect(m.value("cyborg_subscriptions_open")).toBe(1);
    const live = m.samples.filter((s) => s.name === "cyborg_projection_live");
    // One per read model (projections/index.ts).
    expect(live.map((s) => s.labels.projection).sort()).toEqual(projections.map((p) => p.name).sort());
    expect(live.every((s) => s.value === 1)).toBe(true);
    // compute1's fake FPGA: one deployable of two handles, one of them bound.
    expect(m.value("cyborg_capacity_total", { resource_class: "FPGA", host: "compute1" })).toBe(2);
    expect(m.value("cyborg_capacity_used", { resource_class: "FPGA", host: "compute1" })).toBe(1);
    expect(m.value("cyborg_capacity_reserved", { resource_class: "FPGA", host: "compute1" })).toBe(0);
    expect(m.value("cyborg_agent_live", { host: "compute1" })).toBe(1);
    // The one device, held and untainted: AVAILABLE; every other state is there, at zero.
    expect(m.value("cyborg_devices", { state: "AVAILABLE" })).toBe(1);
    expect(m.samples.filter((s) => s.name === "cyborg_devices").map((s) => s.labels.state)).toHaveLength(7);
    expect(m.value("cyborg_devices")).toBe(1);
    for (const s of m.samples) for (const v of Object.values(s.labels)) expect(v, `${s.name} label`).not.toMatch(UUID);
    sub.unsubscribe();

    // docs/operations.md's metric list is the registry's, name for name and type for type.
    const readme = readFileSync("docs/operations.md", "utf8");
    const listed = new Map([...readme.matchAll(/^\| `(cyborg_\w+)` \| (\w+) \|/gm)].map((x) => [x[1]!, x[2]!]));
    const served = new Map([...m.types].filter(([name]) => name.startsWith("cyborg_")));
    expect(listed).toEqual(served);
  });

  it("follows binds and releases in the capacity gauges from one scrape to the next", async () => {
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-follow", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    const used = async () => (await scrape()).value("cyborg_capacity_used", { resource_class: "FPGA", host: "compute1" });
    // The flow above left one handle bound; this test alone finds none.
    const before = await used();
    expect([0, 1]).toContain(before);
    const { instance, sub } = await bindOne("fpga-follow");
    sub.unsubscribe();
    expect(await used()).toBe(before + 1);
    await t.ok("service", op.DELETE_ARQS, { instance });
    expect(await used()).toBe(before);
    expect((await scrape()).value("cyborg_capacity_total", { resource_class: "FPGA", host: "compute1" })).toBe(2);
  });

  it("counts REST requests by route template, never by path", async () => {
    const base = t.url.replace(/\/graphql$/, "");
    const get = (path: string) => fetch(`${base}${path}`, { headers: { "x-auth-token": TOKENS.admin.token } });
    expect((await get("/v2/device_profiles")).status).toBe(200);
    expect((await get(`/accelerator/v2/accelerator_requests/${randomUUID()}`)).status).toBe(404);
    expect((await get("/v2/nothing_here")).status).toBe(404);
    const m = await scrape();
    expect(m.value("cyborg_rest_operations_total", { route: "/v2/device_profiles", method: "GET", status: "200" })).toBe(1);
    expect(m.value("cyborg_rest_operations_total", { route: "/v2/accelerator_requests/{id}", method: "GET", status: "404" })).toBe(1);
    expect(m.value("cyborg_rest_operation_duration_seconds_count", { route: "/v2/device_profiles" })).toBe(1);
    for (const s of m.samples.filter((x) => x.name.startsWith("cyborg_rest_"))) expect(s.labels.route ?? "", s.name).not.toMatch(UUID);
  });

  it("labels an operation by its root field whatever the client names it", async () => {
    await t.ok("admin", `query SomeClientName { deviceProfiles { name } }`);
    const m = await scrape();
    expect(m.value("cyborg_graphql_operations_total", { operation: "deviceProfiles", type: "query", code: "OK" })).toBe(1);
    expect(m.samples.some((s) => s.labels.operation === "SomeClientName")).toBe(false);
  });
});

describe("metrics settings", () => {
  it("METRICS_PORT serves them on their own port, not the API's", async () => {
    const port = await freePort();
    const t = await startTestService({ env: { METRICS_PORT: String(port) } });
    try {
      expect((await fetch(t.url.replace(/\/graphql$/, "/metrics"))).status).toBe(404);
      const own = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(own.status).toBe(200);
      expect(parse(await own.text()).types.get("cyborg_graphql_operations_total")).toBe("counter");
    } finally {
      await t.close();
    }
  });

  it("METRICS=off: no /metrics", async () => {
    const t = await startTestService({ env: { METRICS: "off" } });
    try {
      expect((await fetch(t.url.replace(/\/graphql$/, "/metrics"))).status).toBe(404);
      await t.ok("admin", `{ deviceProfiles { name } }`);
    } finally {
      await t.close();
    }
  });
});

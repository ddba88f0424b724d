/**
 * history(uuid) and trace(correlationId) through GraphQL, for a bind-unbind-delete cycle (the
 * binder finishing the bind) and a device removed while an ARQ held it. And no token secret ever
 * reaches the log.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, TOKENS, type TestService, type Who } from "../api/harness.js";
import * as op from "../api/operations.js";
import { startRedis, type TestRedis } from "../support/redis.js";
import { hostDevices } from "./scenario.js";

const ENTRY = `position stream revision eventId type summary principal roles at recordedAt correlationId causationId notification data hash`;
const HISTORY = `query($uuid: ID!, $first: Int, $after: String) { history(uuid: $uuid, first: $first, after: $after) {
  totalCount pageInfo { hasNextPage endCursor } nodes { ${ENTRY} } } }`;
const TRACE = `query($id: String!) { trace(correlationId: $id) { totalCount nodes { ${ENTRY} } } }`;

interface Entry {
  position: string;
  stream: string;
  type: string;
  summary: string;
  principal: string;
  roles: string[] | null;
  correlationId: string;
  causationId: string;
  eventId: string;
  notification: string | null;
  hash: string | null;
}

// "memory": the embedded default, the audit index on disk beside the log (AUDIT_INDEX=disk);
// "memory, index in memory": AUDIT_INDEX=memory.
describe.each(["memory", "memory, index in memory", "redis"] as const)("history and trace (read models in %s)", (readModels) => {
  let t: TestService;
  let redis: TestRedis | undefined;
  const instance = randomUUID();
  const arqs: string[] = [];
  let device = "";
  let rp = "";

  /** A request with its own correlation id (X-Correlation-Id), as a client may send it. */
  async function as(who: Who, correlationId: string, query: string, variables: Record<string, unknown>) {
    const res = await fetch(t.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS[who].token}`, "x-correlation-id": correlationId },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: any; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  }
  const stateOf = async (uuid: string) => (await t.ok("admin", `query($u: ID!) { acceleratorRequest(uuid: $u) { state } }`, { u: uuid })).acceleratorRequest?.state;
  async function until(what: string, check: () => Promise<boolean>) {
    const deadline = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`waited for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const historyOf = async (uuid: string): Promise<Entry[]> => (await t.ok("admin", HISTORY, { uuid, first: 1000 })).history.nodes;
  const traceOf = async (id: string): Promise<Entry[]> => {
    await t.service.projector!.caughtUp();
    return (await t.ok("admin", TRACE, { id })).trace.nodes;
  };

  beforeAll(async () => {
    // The binder finishes binds (none inline), so its steps show in the bind's trace.
    redis = readModels === "redis" ? await startRedis() : undefined;
    const env: Record<string, string> = redis ? { REDIS_URL: redis.url } : readModels === "memory" ? {} : { AUDIT_INDEX: "memory" };
    t = await startTestService({ env, overrides: { bindInline: false } });
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
    await as("agent", "report-1", op.REPORT, { hostname: "compute1", devices: hostDevices() });
    const devices = (await t.ok("admin", `{ devices(filter: { hostname: "compute1" }) { nodes { uuid deployables { rpUuid } } } }`)).devices.nodes;
    device = devices[0].uuid;
    rp = devices[0].deployables[0].rpUuid;
    for (let i = 0; i < 2; i++) arqs.push((await t.ok("service", op.CREATE_ARQS, { name: "fpga-1" })).createAcceleratorRequests[0].uuid);

    await as("service", "bind-1", op.BIND, { bindings: [{ arqUuid: arqs[0], hostname: "compute1", deviceRpUuid: rp, instanceUuid: instance }] });
    await until("the binder to bind", async () => (await stateOf(arqs[0]!)) === "BOUND");
    await as("service", "unbind-1", op.UNBIND, { uuids: [arqs[0]] });
    await as("service", "delete-1", op.DELETE_ARQS, { uuids: [arqs[0]] });

    // Device A leaves the report while the second ARQ holds one of its handles.
    await as("service", "bind-2", op.BIND, { bindings: [{ arqUuid: arqs[1], hostname: "compute1", deviceRpUuid: rp, instanceUuid: randomUUID() }] });
    await until("the second bind", async () => (await stateOf(arqs[1]!)) === "BOUND");
    await as("agent", "report-2", op.REPORT, { hostname: "compute1", devices: hostDevices({ withA: false }) });
    await until("the binder to fail the ARQ", async () => (await stateOf(arqs[1]!)) === "BIND_FAILED");
    await as("service", "delete-2", op.DELETE_ARQS, { uuids: [arqs[1]] });
    await t.service.projector!.caughtUp();
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await redis?.stop();
  });

  it("trace of a bind: the instance, the ARQ, the host's allocation, the binder's steps and the notification", async () => {
    const entries = await traceOf("bind-1");
    expect(entries.map((e) => [e.type, e.stream.split("-")[0], e.principal])).toEqual([
      ["InstanceArqsBound", "instance", "service"],
      ["ArqBindStarted", "arq", "service"],
      ["AttachHandleAllocated", "host", "system:binder"],
      ["ArqBound", "arq", "system:binder"],
    ]);
    const started = entries[1]!;
    // The binder's steps name the event they answer.
    expect(entries.slice(2).map((e) => e.causationId)).toEqual([started.eventId, started.eventId]);
    expect(started.summary).toBe(`ARQ ${arqs[0]}: bind to instance ${instance} on compute1 started by service (service)`);
    expect(entries[3]!.summary).toMatch(new RegExp(`^ARQ ${arqs[0]} bound to instance ${instance} on compute1 \\(attach handle .*, TEST_PCI 0000:0c:00\\.\\d\\) by system:binder$`));
    expect(entries[3]!.notification).toBe(`accelerator-request-bound COMPLETED for instance ${instance} (tag ${arqs[0]})`);
    expect(entries.every((e) => e.correlationId === "bind-1" && /^[0-9a-f]{64}$/.test(e.hash ?? ""))).toBe(true);
    // Positions increase: one story, in log order.
    expect(entries.map((e) => BigInt(e.position))).toEqual([...entries.map((e) => BigInt(e.position))].sort((a, b) => (a < b ? -1 : 1)));
  });

  it("history of an ARQ through a bind-unbind-delete cycle, across its streams", async () => {
    const entries = await historyOf(arqs[0]!);
    const types = entries.map((e) => e.type);
    const order = ["ArqCreated", "ArqBindStarted", "AttachHandleAllocated", "ArqBound", "ArqUnbound", "AttachHandleReleased", "InstanceArqsReleased", "ArqDeleted"];
    expect(types.filter((x) => order.includes(x))).toEqual(order);
    expect(types).toContain("DeviceProfileArqsCreated");
    expect(types).toContain("InstanceArqsBound");
    expect(new Set(entries.map((e) => e.stream.split("-")[0]))).toEqual(new Set(["arq", "deviceProfile", "instance", "host"]));
    expect(new Set(entries.map((e) => e.correlationId))).toEqual(new Set([entries[0]!.correlationId, "bind-1", "unbind-1", "delete-1"]));
    const unbound = entries.find((e) => e.type === "ArqUnbound")!;
    expect(unbound.summary).toMatch(new RegExp(`^ARQ ${arqs[0]} unbound from instance ${instance} on compute1, releasing attach handle .* by service \\(service\\)$`));
    expect(unbound.roles).toEqual(["service"]);
  });

  it("history of an instance", async () => {
    const types = (await historyOf(instance)).map((e) => e.type);
    expect(types).toEqual(["InstanceArqsBound", "ArqBindStarted", "AttachHandleAllocated", "ArqBound", "ArqUnbound", "InstanceArqsReleased"]);
  });

  it("history of a device that was lost while bound, then removed: its deployables' and handles' events included", async () => {
    const entries = await historyOf(device);
    const types = entries.map((e) => e.type);
    expect(types[0]).toBe("DeviceDiscovered");
    expect(types.at(-1)).toBe("DeviceRemoved");
    for (const t2 of ["DeployableAdded", "AttributeSet", "AttachHandleAdded", "AttachHandleAllocated", "AttachHandleReleased", "DeviceLost", "AttachHandleRemoved", "DeployableRemoved"]) {
      expect(types, t2).toContain(t2);
    }
    expect(types.filter((x) => x === "AttachHandleAllocated")).toHaveLength(2);
    const lost = entries.find((e) => e.type === "DeviceLost")!;
    expect(lost.summary).toBe(`device ${device} left compute1's report while held by ARQ ${arqs[1]}: kept, marked lost, until released by agent (agent)`);
    expect(lost.correlationId).toBe("report-2");
    // Removed by the request that released its last handle.
    expect(entries.at(-1)!.correlationId).toBe("delete-2");
  });

  it("trace of the report that lost the device: the loss and the binder failing the ARQ (no bind, no notification)", async () => {
    const entries = await traceOf("report-2");
    expect(entries.map((e) => [e.type, e.principal])).toEqual([
      ["DeviceLost", "agent"],
      ["HostReportSettled", "agent"],
      ["ArqBindFailed", "system:binder"],
    ]);
    expect(entries[2]!.causationId).toBe(entries[0]!.eventId);
    expect(entries[2]!.summary).toMatch(/bind to instance .* failed: device .* on compute1 left the host's inventory while in use by system:binder/);
    expect(entries[2]!.notification).toBeNull();
  });

  it("pages by position, with a total", async () => {
    const all = await historyOf(device);
    const seen: Entry[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await t.ok("admin", HISTORY, { uuid: device, first: 4, after })).history;
      expect(page.totalCount).toBe(all.length);
      seen.push(...page.nodes);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(all);
  });

  it("bad input gets a code and a message; only audit:read may ask", async () => {
    const bad = await t.gql("admin", HISTORY, { uuid: "compute1" });
    expect(bad.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT", field: "uuid" } });
    const badTrace = await t.gql("admin", TRACE, { id: "not a correlation id!" });
    expect(badTrace.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "correlationId" });
    const badAfter = await t.gql("admin", HISTORY, { uuid: device, after: "yesterday" });
    expect(badAfter.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "after" });
    for (const who of ["manager", "service", "agent"] as const) expect((await t.gql(who, HISTORY, { uuid: device })).errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect((await t.ok("admin", HISTORY, { uuid: randomUUID() })).history).toMatchObject({ totalCount: 0, nodes: [] });
  });

  it("the REST API records the same who and why: the token's name and roles, the request id as correlation", async () => {
    const base = new URL(t.url).origin;
    const res = await fetch(`${base}/v2/accelerator_requests`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-auth-token": TOKENS.service.token, "x-openstack-request-id": "req-rest-1" },
      body: JSON.stringify({ device_profile_name: "fpga-1" }),
    });
    expect(res.status).toBe(201);
    const uuid = ((await res.json()) as { arqs: Array<{ uuid: string }> }).arqs[0]!.uuid;
    const entries = await historyOf(uuid);
    expect(entries.map((e) => e.type)).toEqual(["ArqCreated", "DeviceProfileArqsCreated"]);
    for (const e of entries) expect(e).toMatchObject({ principal: "service", roles: ["service"], correlationId: "req-rest-1", summary: expect.stringMatching(/by service \(service\)$/) });
  });

  it("no token secret reaches the log: principals are token names, never tokens", async () => {
    const log = await t.service.store.readAll();
    expect(log.length).toBeGreaterThan(40);
    const secrets = Object.values(TOKENS).map((x) => x.token);
    for (const e of log) {
      const text = JSON.stringify(e, (_, v) => (typeof v === "bigint" ? v.toString() : v));
      for (const s of secrets) expect(text.includes(s), `${e.type} at ${e.position}`).toBe(false);
      expect(Object.keys(TOKENS).concat("system:binder")).toContain(e.metadata.principal);
    }
    // Not in the stored bytes either (every database of the environment).
    const dir = join(t.dataDir, "events");
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f));
      for (const s of secrets) expect(bytes.includes(s), f).toBe(false);
    }
  });
});

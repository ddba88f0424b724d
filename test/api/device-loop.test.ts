/**
 * The device loop through the API: a NoExecute taint gives each holder an eviction notice (GraphQL
 * and REST), the device drains, its clean travels to the agent's agentRequests subscription, and
 * the agent's report and a healthy inventory report offer the device again.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { restClient } from "../rest/support.js";
import { collect, FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const TAINT = `mutation($uuid: ID!, $taint: TaintInput!) { taintDevice(uuid: $uuid, taint: $taint) { uuid lifecycleState } }`;
const UNTAINT = `mutation($uuid: ID!, $key: String!) { untaintDevice(uuid: $uuid, key: $key) { uuid lifecycleState } }`;
const DEVICE = `query($uuid: ID!) { device(uuid: $uuid) { uuid lifecycleState
  holders { arqUuid instanceUuid since eviction { taintKey deadline } }
  cleaning { required inFlight { requestId reason } qualifyingSince failure { reason } last { requestId outcome digest command durationMs } } } }`;
const ARQ = `query($uuid: ID!) { acceleratorRequest(uuid: $uuid) { uuid state eviction { deviceUuid taintKey reason deadline requestedAt } } }`;
const AGENT_REQUESTS = `subscription($hostname: String!) { agentRequests(hostname: $hostname) {
  kind requestId hostname program { requestId } clean { requestId deviceUuid deviceType driverNames reason } } }`;
const REPORT_CLEANING = `mutation($input: CleaningResultInput!) { reportCleaningResult(input: $input) { recorded } }`;
const CLEAN_DEVICE = `mutation($uuid: ID!, $reason: String) { cleanDevice(uuid: $uuid, reason: $reason) { uuid lifecycleState } }`;
const HEALTH = { key: "cyborg.openstack.org/health", effect: "NoExecute", reason: "XID 79: GPU has fallen off the bus" };

describe("the device loop over the API", () => {
  let t: TestService;
  let rpUuid: string;
  let deviceUuid: string;

  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "clean", groups: [{ "resources:FPGA": "1", "accel:clean_after_use": "true" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    rpUuid = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
    deviceUuid = (await t.ok("admin", op.DEVICES)).devices.nodes[0].uuid;
  });
  afterAll(() => t?.close());

  it("drain, notice, clean, qualify: each step shows on the device and its holders' ARQs", async () => {
    const arqs = (await t.ok("service", op.CREATE_ARQS, { name: "clean" })).createAcceleratorRequests.concat(
      (await t.ok("service", op.CREATE_ARQS, { name: "clean" })).createAcceleratorRequests,
    );
    const instances = arqs.map(() => randomUUID());
    const bound = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { arqs: arqs.map((a: { uuid: string }) => a.uuid) });
    await t.ok("service", op.BIND, { bindings: arqs.map((a: { uuid: string }, i: number) => ({ arqUuid: a.uuid, hostname: "compute1", deviceRpUuid: rpUuid, instanceUuid: instances[i] })) });
    expect((await bound.next(2)).map((e) => e.acceleratorRequestBound.status)).toEqual(["COMPLETED", "COMPLETED"]);
    bound.unsubscribe();

    expect((await t.ok("admin", TAINT, { uuid: deviceUuid, taint: HEALTH })).taintDevice.lifecycleState).toBe("DRAINING");
    const evicted = await vi.waitFor(async () => {
      const views = await Promise.all(arqs.map(async (a: { uuid: string }) => (await t.ok("service", ARQ, { uuid: a.uuid })).acceleratorRequest));
      if (views.some((v) => !v.eviction)) throw new Error("not every holder has its notice yet");
      return views;
    }, { timeout: 10_000, interval: 20 });
    for (const v of evicted) expect(v.eviction).toMatchObject({ deviceUuid, taintKey: HEALTH.key, reason: HEALTH.reason });
    const deadline = Date.parse(evicted[0].eviction.deadline) - Date.parse(evicted[0].eviction.requestedAt);
    expect(deadline).toBeGreaterThan(200_000);

    const rest = await restClient(t.url).call("service", "GET", `/v2/accelerator_requests/${arqs[0].uuid}`);
    expect(rest.json).toMatchObject({ uuid: arqs[0].uuid, state: "Bound", eviction: { device_uuid: deviceUuid, taint_key: HEALTH.key, reason: HEALTH.reason } });

    const { device } = await t.ok("admin", DEVICE, { uuid: deviceUuid });
    expect(device.lifecycleState).toBe("DRAINING");
    expect(device.holders.map((h: { instanceUuid: string }) => h.instanceUuid).sort()).toEqual([...instances].sort());
    for (const h of device.holders) {
      expect(Date.parse(h.since)).not.toBeNaN();
      expect(h.eviction).toMatchObject({ taintKey: HEALTH.key });
    }

    const requests = collect<{ agentRequests: { kind: string; requestId: string; clean: { deviceUuid: string; driverNames: string[]; reason: string } } }>(t.ws("agent"), AGENT_REQUESTS, { hostname: "compute1" });
    await t.ok("service", op.DELETE_ARQS, { uuids: arqs.map((a: { uuid: string }) => a.uuid) });
    const [request] = await requests.next(1);
    requests.unsubscribe();
    expect(request!.agentRequests).toMatchObject({ kind: "CLEAN", clean: { deviceUuid, driverNames: ["fake"], reason: expect.stringMatching(/clean_after_use/) } });
    const requestId = request!.agentRequests.requestId;
    let d = (await t.ok("admin", DEVICE, { uuid: deviceUuid })).device;
    expect(d).toMatchObject({ lifecycleState: "CLEANING", holders: [], cleaning: { inFlight: { requestId } } });

    const input = { hostname: "compute1", deviceUuid, requestId, ok: true, digest: "sha256:1f2e", command: ["fake-clean", "--blank"], durationMs: 12 };
    expect((await t.ok("agent", REPORT_CLEANING, { input })).reportCleaningResult).toEqual({ recorded: true });
    d = (await t.ok("admin", DEVICE, { uuid: deviceUuid })).device;
    expect(d).toMatchObject({ lifecycleState: "QUALIFYING", cleaning: { inFlight: null, last: { requestId, outcome: "cleaned", digest: "sha256:1f2e", command: ["fake-clean", "--blank"], durationMs: 12 } } });

    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    expect((await t.ok("admin", DEVICE, { uuid: deviceUuid })).device.lifecycleState).toBe("DRAINED");
    expect((await t.ok("admin", UNTAINT, { uuid: deviceUuid, key: HEALTH.key })).untaintDevice.lifecycleState).toBe("AVAILABLE");
  });

  it("a failed clean leaves the device FAILED with the reason; cleanDevice repairs it; bad reports are refused", async () => {
    const requests = collect<{ agentRequests: { requestId: string } }>(t.ws("agent"), AGENT_REQUESTS, { hostname: "compute1" });
    expect((await t.ok("admin", CLEAN_DEVICE, { uuid: deviceUuid, reason: "burn-in before the next tenant" })).cleanDevice.lifecycleState).toBe("CLEANING");
    const [request] = await requests.next(1);
    const requestId = request!.agentRequests.requestId;
    const bad = await t.gql("agent", REPORT_CLEANING, { input: { hostname: "compute1", deviceUuid, requestId, ok: true, digest: "", command: ["x"], durationMs: 1 } });
    expect(bad.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    await t.ok("agent", REPORT_CLEANING, { input: { hostname: "compute1", deviceUuid, requestId, ok: false, reason: "fake-clean: exit code 3" } });
    const { device } = await t.ok("admin", DEVICE, { uuid: deviceUuid });
    expect(device).toMatchObject({ lifecycleState: "FAILED", cleaning: { failure: { reason: "cleaning failed: fake-clean: exit code 3" }, last: { outcome: "failed" } } });
    await t.ok("admin", CLEAN_DEVICE, { uuid: deviceUuid });
    const again = (await requests.next(2))[1];
    requests.unsubscribe();
    expect(again!.agentRequests.requestId).not.toBe(requestId);
  });
});

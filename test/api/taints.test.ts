/**
 * Device taints through the API: GraphQL over HTTP and WebSocket, Cyborg's REST disable/enable, and
 * what a taint does to binds (refused unless the group tolerates it) and to Placement's view.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restClient } from "../rest/support.js";
import { collect, FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const TAINT = `mutation($uuid: ID!, $taint: TaintInput!) { taintDevice(uuid: $uuid, taint: $taint) {
  uuid status lifecycleState taints { key value effect by reason at } } }`;
const UNTAINT = `mutation($uuid: ID!, $key: String!, $effect: TaintEffect, $reason: String) {
  untaintDevice(uuid: $uuid, key: $key, effect: $effect, reason: $reason) { uuid status lifecycleState taints { key effect } } }`;
const DEVICE = `query($uuid: ID!) { device(uuid: $uuid) { uuid status lifecycleState taints { key value effect by reason } } }`;

describe("device taints over the API", () => {
  let t: TestService;
  let rpUuid: string;
  let deviceUuid: string;

  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("admin", op.CREATE_PROFILE, {
      input: { name: "burn-in", groups: [{ "resources:FPGA": "1", "accel:tolerations": "example.com/burn-in:NoSchedule" }] },
    });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    rpUuid = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
    deviceUuid = (await t.ok("admin", op.DEVICES)).devices.nodes[0].uuid;
  });
  afterAll(() => t?.close());

  async function bindOne(profile: string) {
    const [arq] = (await t.ok("service", op.CREATE_ARQS, { name: profile })).createAcceleratorRequests;
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rpUuid, instanceUuid: instance }] });
    const [e] = await sub.next(1);
    sub.unsubscribe();
    return { instance, event: e!.acceleratorRequestBound };
  }
  const reserved = async () => (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].reserved;

  it("taintDevice records the taint by the caller; the device is MAINTAINING, TAINTED, and reserved in Placement", async () => {
    const taint = { key: "example.com/burn-in", value: "gpu", effect: "NoSchedule", reason: "burn-in after repair" };
    const { taintDevice } = await t.ok("admin", TAINT, { uuid: deviceUuid, taint });
    expect(taintDevice).toMatchObject({ status: "MAINTAINING", lifecycleState: "TAINTED", taints: [{ ...taint, by: "admin" }] });
    expect(Date.parse(taintDevice.taints[0].at)).not.toBeNaN();
    expect(await reserved()).toBe(2);
  });

  it("no bind lands on the tainted device, the reason naming the taint; a group that tolerates it binds", async () => {
    const refused = await bindOne("fpga");
    expect(refused.event).toMatchObject({ status: "FAILED" });
    expect(refused.event.reason).toMatch(/tainted: example.com\/burn-in=gpu:NoSchedule \(by admin: burn-in after repair\)/);
    const tolerated = await bindOne("burn-in");
    expect(tolerated.event.status).toBe("COMPLETED");
    await t.ok("service", op.DELETE_ARQS, { instance: tolerated.instance });
    await t.ok("service", op.DELETE_ARQS, { instance: refused.instance });
  });

  it("a NoExecute taint on a held device shows DRAINING, then DRAINED once released", async () => {
    await t.ok("admin", UNTAINT, { uuid: deviceUuid, key: "example.com/burn-in" });
    const held = await bindOne("fpga");
    expect(held.event.status).toBe("COMPLETED");
    const { taintDevice } = await t.ok("admin", TAINT, { uuid: deviceUuid, taint: { key: "cyborg.openstack.org/health", effect: "NoExecute", reason: "XID 79" } });
    expect(taintDevice.lifecycleState).toBe("DRAINING");
    await t.ok("service", op.DELETE_ARQS, { instance: held.instance });
    expect((await t.ok("admin", DEVICE, { uuid: deviceUuid })).device.lifecycleState).toBe("DRAINED");
    const { untaintDevice } = await t.ok("admin", UNTAINT, { uuid: deviceUuid, key: "cyborg.openstack.org/health", effect: "NoExecute", reason: "replaced" });
    expect(untaintDevice).toMatchObject({ status: "ENABLED", lifecycleState: "AVAILABLE", taints: [] });
    expect(await reserved()).toBe(0);
  });

  it("refuses bad input and a taint that is not there, with the field and a code, the same over WebSocket", async () => {
    const bad = await t.gql("admin", TAINT, { uuid: deviceUuid, taint: { key: "Not A Key", effect: "NoSchedule", reason: "x" } });
    expect(bad.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "key" });
    const noReason = await t.gql("admin", TAINT, { uuid: deviceUuid, taint: { key: "k", effect: "NoSchedule", reason: " " } });
    expect(noReason.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "reason" });
    const absent = await t.gql("admin", UNTAINT, { uuid: deviceUuid, key: "k" });
    expect(absent.errors![0]).toMatchObject({ extensions: { code: "NOT_FOUND", field: "key" } });
    expect(absent.errors![0]!.message).toMatch(/carries no taint k/);
    const unknown = await t.gql("admin", TAINT, { uuid: randomUUID(), taint: { key: "k", effect: "NoSchedule", reason: "x" } });
    expect(unknown.errors![0]!.extensions!.code).toBe("NOT_FOUND");

    const overWs = await new Promise<Array<{ message: string; extensions?: { code?: string; field?: string } }>>((resolve) => {
      let errors: Array<{ message: string; extensions?: { code?: string; field?: string } }> = [];
      t.ws("admin").subscribe(
        { query: TAINT, variables: { uuid: deviceUuid, taint: { key: "Not A Key", effect: "NoSchedule", reason: "x" } } },
        { next: (r) => void (errors = [...errors, ...((r.errors ?? []) as typeof errors)]), error: (e) => resolve(e as never), complete: () => resolve(errors) },
      );
    });
    expect(overWs.map((e) => [e.extensions?.code, e.extensions?.field, e.message])).toEqual([["BAD_USER_INPUT", "key", bad.errors![0]!.message]]);
  });

  it("taints over WebSocket as over HTTP", async () => {
    const sub = collect<{ taintDevice: { taints: Array<{ key: string; by: string }> } }>(t.ws("admin"), TAINT, {
      uuid: deviceUuid,
      taint: { key: "example.com/ws", effect: "NoSchedule", reason: "over the socket" },
    });
    const [answer] = await sub.next(1);
    expect(answer!.taintDevice.taints).toEqual([expect.objectContaining({ key: "example.com/ws", by: "admin" })]);
    await t.ok("admin", UNTAINT, { uuid: deviceUuid, key: "example.com/ws" });
  });

  it("only admins taint and untaint", async () => {
    for (const who of ["member", "reader", "service", "agent"] as const) {
      const r = await t.gql(who, TAINT, { uuid: deviceUuid, taint: { key: "k", effect: "NoSchedule", reason: "x" } });
      expect(r.errors![0]!.extensions!.code, who).toBe("FORBIDDEN");
      expect((await t.gql(who, UNTAINT, { uuid: deviceUuid, key: "k" })).errors![0]!.extensions!.code, who).toBe("FORBIDDEN");
    }
    expect((await t.ok("admin", DEVICE, { uuid: deviceUuid })).device.taints).toEqual([]);
  });

  it("a device's history tells its taints", async () => {
    const q = `query($uuid: ID!) { history(uuid: $uuid, first: 200) { nodes { type summary } } }`;
    const r = await t.gql("admin", q, { uuid: deviceUuid });
    if (r.errors) return expect.fail(JSON.stringify(r.errors));
    const summaries = r.data.history.nodes.filter((n: { type: string }) => n.type === "DeviceTainted" || n.type === "DeviceUntainted").map((n: { summary: string }) => n.summary);
    expect(summaries.join("\n")).toContain(`device ${deviceUuid} on compute1 tainted cyborg.openstack.org/health:NoExecute by admin: XID 79`);
    expect(summaries.join("\n")).toContain(`taint cyborg.openstack.org/health:NoExecute removed from device ${deviceUuid} on compute1 by admin: replaced`);
  });

  describe("Cyborg's REST disable and enable", () => {
    const rest = (method: string, path: string) => restClient(t.url).call("admin", method, `/v2${path}`, { version: 3 });

    it("disable is the maintenance taint by cyborg-rest; enable removes it", async () => {
      expect((await rest("POST", `/devices/${deviceUuid}/disable`)).status).toBe(200);
      const { device } = await t.ok("admin", DEVICE, { uuid: deviceUuid });
      expect(device.taints).toMatchObject([{ key: "cyborg.openstack.org/maintenance", effect: "NoSchedule", by: "cyborg-rest" }]);
      expect((await rest("GET", `/devices/${deviceUuid}`)).json.status).toBe("maintaining");
      expect(await reserved()).toBe(2);
      expect((await rest("POST", `/devices/${deviceUuid}/enable`)).status).toBe(200);
      expect((await rest("GET", `/devices/${deviceUuid}`)).json.status).toBe("enabled");
      expect(await reserved()).toBe(0);
    });

    it("enable is refused with 409, naming the taint, while another taint keeps the device MAINTAINING", async () => {
      await t.ok("admin", TAINT, { uuid: deviceUuid, taint: { key: "cyborg.openstack.org/health", effect: "NoSchedule", reason: "ECC errors" } });
      const r = await rest("POST", `/devices/${deviceUuid}/enable`);
      expect(r.status).toBe(409);
      expect(r.fault).toMatchObject({ code: "CONFLICT" });
      expect(r.fault!.faultstring).toMatch(/cyborg.openstack.org\/health:NoSchedule \(by admin: ECC errors\)/);
      expect((await rest("GET", `/devices/${deviceUuid}`)).json.status).toBe("maintaining");
      const viaGraphql = await t.gql("admin", op.SET_STATUS, { uuid: deviceUuid, status: "ENABLED" });
      expect(viaGraphql.errors![0]!.extensions!.code).toBe("CONFLICT");
      await t.ok("admin", UNTAINT, { uuid: deviceUuid, key: "cyborg.openstack.org/health" });
    });
  });
});

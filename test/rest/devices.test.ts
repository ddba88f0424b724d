/**
 * /v2/devices over HTTP: Cyborg's fields, and beside them the device's health, its place in the
 * health loop, its taints and its holders, the same as GraphQL's Device tells.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { FAKE_HOST_DEVICES, startTestService, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { restClient } from "./support.js";

const CRITICAL = { status: "CRITICAL", reasons: [{ code: "ECC_VOLATILE_UNCORRECTABLE", message: "uncorrectable ECC errors since the driver loaded", count: 2 }] };
const DEVICE = `query($uuid: ID!) { device(uuid: $uuid) { lifecycleState health { status reasons { code message count } }
  taints { key value effect by reason at } holders { arqUuid instanceUuid since eviction { deviceUuid taintKey reason deadline requestedAt } } } }`;
const CYBORG_FIELDS = ["uuid", "type", "vendor", "model", "std_board_info", "vendor_board_info", "hostname", "created_at", "updated_at", "links"];

describe("GET /v2/devices: the health loop beside Cyborg's fields", () => {
  let t: TestService;
  let rest: ReturnType<typeof restClient>;
  let deviceUuid: string;
  let arqUuid: string;
  const instanceUuid = randomUUID();

  beforeAll(async () => {
    t = await startTestService();
    rest = restClient(t.url);
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    const rpUuid = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
    deviceUuid = (await t.ok("admin", op.DEVICES)).devices.nodes[0].uuid;
    arqUuid = (await t.ok("service", op.CREATE_ARQS, { name: "fpga" })).createAcceleratorRequests[0].uuid;
    const [bound] = (await t.ok("service", op.BIND, { bindings: [{ arqUuid, hostname: "compute1", deviceRpUuid: rpUuid, instanceUuid }] })).bindAcceleratorRequests;
    expect(bound.state).toBe("BOUND");
  });
  afterAll(() => t?.close());

  it("shows a healthy, untainted device as available, with its holder", async () => {
    const shown = await rest.call("admin", "GET", `/v2/devices/${deviceUuid}`);
    expect(shown.status).toBe(200);
    expect(Object.keys(shown.json)).toEqual([...CYBORG_FIELDS, "health", "state", "taints", "holders"]);
    expect(shown.json).toMatchObject({ health: { status: "OK", reasons: [] }, state: "available", taints: [] });
    expect(shown.json.holders).toEqual([{ arq_uuid: arqUuid, instance_uuid: instanceUuid, since: expect.any(String), eviction: null }]);
    expect(Date.parse(shown.json.holders[0].since)).not.toBeNaN();
  });

  it("shows a CRITICAL report's health, its NoExecute taint, the draining state and the holder's notice, as GraphQL does", async () => {
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2).map((d) => ({ ...d, health: CRITICAL })) });
    const shown = await vi.waitFor(async () => {
      const r = await rest.call("admin", "GET", `/v2/devices/${deviceUuid}`, { version: 3 });
      if (!r.json.holders[0]?.eviction) throw new Error("the holder has no notice yet");
      return r.json;
    }, { timeout: 10_000, interval: 20 });
    expect(shown).toMatchObject({ status: "maintaining", health: CRITICAL, state: "draining" });
    expect(shown.taints).toEqual([
      { key: "cyborg.openstack.org/health", value: "CRITICAL", effect: "NoExecute", by: "health:critical", reason: expect.stringMatching(/^CRITICAL: uncorrectable ECC/), at: expect.any(String) },
    ]);
    expect(shown.holders[0]).toMatchObject({ arq_uuid: arqUuid, instance_uuid: instanceUuid, eviction: { device_uuid: deviceUuid, taint_key: "cyborg.openstack.org/health" } });

    const { device } = await t.ok("admin", DEVICE, { uuid: deviceUuid });
    expect(shown.state).toBe(device.lifecycleState.toLowerCase());
    expect(shown.health).toEqual(device.health);
    expect(shown.taints).toEqual(device.taints);
    const [h] = device.holders;
    expect(shown.holders).toEqual([{
      arq_uuid: h.arqUuid, instance_uuid: h.instanceUuid, since: h.since,
      eviction: { device_uuid: h.eviction.deviceUuid, taint_key: h.eviction.taintKey, reason: h.eviction.reason, deadline: h.eviction.deadline, requested_at: h.eviction.requestedAt },
    }]);

    const listed = (await rest.call("manager", "GET", "/v2/devices?hostname=compute1")).json.devices;
    expect(listed.map((d: { uuid: string; state: string }) => [d.uuid, d.state])).toEqual([[deviceUuid, "draining"]]);
  });

  it("shows the device drained once its holder let go", async () => {
    await t.ok("service", op.DELETE_ARQS, { uuids: [arqUuid] });
    const shown = (await rest.call("admin", "GET", `/v2/devices/${deviceUuid}`)).json;
    expect(shown).toMatchObject({ state: "drained", holders: [] });
  });
});

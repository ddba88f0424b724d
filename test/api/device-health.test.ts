/**
 * Device health over the API: an agent's report carries it, Device.health shows it (HTTP and
 * WebSocket), the default health rules taint the device in the same write, an unchanged health
 * still confirms by digest, and a bad health is refused with the field named.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportDigest } from "../../src/domain/inventory/digest.js";
import { collect, FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const REPORT = `mutation($hostname: String!, $devices: [DriverDeviceInput!]!) {
  reportHostInventory(hostname: $hostname, devices: $devices) { added updated unchanged digest } }`;
const DEVICES = `query { devices(filter: { hostname: "compute1" }) { nodes {
  uuid status health { status reasons { code message count } } taints { key value effect by reason } } } }`;

const critical = { status: "CRITICAL", reasons: [{ code: "ECC_VOLATILE_UNCORRECTABLE", message: "uncorrectable ECC errors since the driver loaded", count: 2 }] };
const withHealth = (health: unknown) => FAKE_HOST_DEVICES(2).map((d) => ({ ...d, health }));

describe("Device.health", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t?.close());

  it("is OK with no reasons for a device reported without health", async () => {
    await t.ok("agent", REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    const [d] = (await t.ok("admin", DEVICES)).devices.nodes;
    expect(d.health).toEqual({ status: "OK", reasons: [] });
    expect(d.taints).toEqual([]);
  });

  it("shows a reported CRITICAL health, tainted NoExecute by the default rule, over HTTP and WebSocket", async () => {
    expect((await t.ok("agent", REPORT, { hostname: "compute1", devices: withHealth(critical) })).reportHostInventory).toMatchObject({ updated: 1 });
    const [d] = (await t.ok("admin", DEVICES)).devices.nodes;
    expect(d.health).toEqual(critical);
    expect(d.status).toBe("MAINTAINING");
    expect(d.taints).toEqual([
      { key: "cyborg.openstack.org/health", value: "CRITICAL", effect: "NoExecute", by: "health:critical", reason: "CRITICAL: uncorrectable ECC errors since the driver loaded (2)" },
    ]);
    const ws = t.ws("admin");
    try {
      const [viaWs] = await collect<{ devices: { nodes: Array<{ health: unknown }> } }>(ws, DEVICES).next(1);
      expect(viaWs!.devices.nodes[0]!.health).toEqual(critical);
    } finally {
      await ws.dispose();
    }
  });

  it("costs nothing while it holds: the digest confirms, and the same report writes no event", async () => {
    const devices = withHealth(critical);
    const head = await t.service.store.headPosition();
    expect((await t.ok("agent", op.CONFIRM, { hostname: "compute1", digest: reportDigest(devices) })).confirmHostInventory).toMatchObject({ unchanged: 1 });
    expect((await t.ok("agent", REPORT, { hostname: "compute1", devices })).reportHostInventory).toMatchObject({ updated: 0, unchanged: 1 });
    expect(await t.service.store.headPosition()).toBe(head);
    // A recovered device: the health taint goes with the health.
    await t.ok("agent", REPORT, { hostname: "compute1", devices: withHealth({ status: "OK", reasons: [] }) });
    const [d] = (await t.ok("admin", DEVICES)).devices.nodes;
    expect(d).toMatchObject({ status: "ENABLED", health: { status: "OK", reasons: [] }, taints: [] });
  });

  it("refuses a bad health with the field named, and writes nothing", async () => {
    const head = await t.service.store.headPosition();
    const badCode = await t.gql("agent", REPORT, { hostname: "compute1", devices: withHealth({ status: "WARNING", reasons: [{ code: "not a code", message: "x" }] }) });
    expect(badCode.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "devices[0].health.reasons[0].code" });
    const badStatus = await t.gql("agent", REPORT, { hostname: "compute1", devices: withHealth({ status: "SICK", reasons: [] }) });
    expect(badStatus.errors?.[0]?.message).toMatch(/SICK/);
    expect(await t.service.store.headPosition()).toBe(head);
  });
});

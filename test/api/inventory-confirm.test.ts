/** confirmHostInventory over HTTP: the agent's "is my inventory still what you have?" before a full report. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportDigest } from "../../src/domain/inventory/digest.js";
import { FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const REPORT_DIGEST = `mutation($hostname: String!, $devices: [DriverDeviceInput!]!) {
  reportHostInventory(hostname: $hostname, devices: $devices) { revision digest } }`;

describe("confirmHostInventory", () => {
  let t: TestService;
  const devices = FAKE_HOST_DEVICES(2);
  const digest = reportDigest(devices);
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t?.close());

  it("answers null before a report, then, for the agent and for admin, what an unchanged report answers; writes nothing", async () => {
    expect((await t.ok("agent", op.CONFIRM, { hostname: "compute1", digest })).confirmHostInventory).toBeNull();
    const report = (await t.ok("agent", REPORT_DIGEST, { hostname: "compute1", devices })).reportHostInventory;
    // The server's digest of the coerced GraphQL input is the agent's digest of what it sent.
    expect(report.digest).toBe(digest);
    const head = await t.service.store.headPosition();
    const expected = { hostname: "compute1", added: 0, updated: 0, removed: 0, unchanged: 1, revision: report.revision, digest };
    expect((await t.ok("agent", op.CONFIRM, { hostname: "compute1", digest })).confirmHostInventory).toEqual(expected);
    expect((await t.ok("admin", op.CONFIRM, { hostname: "compute1", digest })).confirmHostInventory).toEqual(expected);
    expect((await t.ok("admin", op.CONFIRM, { hostname: "compute1", digest: reportDigest(FAKE_HOST_DEVICES(3)) })).confirmHostInventory).toBeNull();
    expect(await t.service.store.headPosition()).toBe(head);
  });

  it("takes a report written inline in the query (JSON scalars parsed from literals) with the same digest", async () => {
    const [d] = devices;
    const handles = d!.deployables[0]!.attachHandles.map((h) => `{ type: ${h.type}, info: ${literal(h.info)} }`).join(", ");
    const query = `mutation { reportHostInventory(hostname: "compute1", devices: [{
      type: FPGA, vendor: "${d!.vendor}", model: "${d!.model}", controlPath: { type: "PCI", info: ${literal(d!.controlPath.info)} },
      deployables: [{ name: "compute1_FakeDevice", numAccelerators: 2, driverName: "fake",
        attributes: [{ key: "rc", value: "FPGA" }, { key: "trait0", value: "CUSTOM_FAKE_DEVICE" }], attachHandles: [${handles}] }] }]) {
      added updated removed digest } }`;
    const head = await t.service.store.headPosition();
    expect((await t.ok("agent", query)).reportHostInventory).toEqual({ added: 0, updated: 0, removed: 0, digest });
    expect(await t.service.store.headPosition()).toBe(head);
  });

  it("is refused for another host's agent token (FORBIDDEN) and for a digest that is not v1: and 64 hex digits", async () => {
    const other = await t.gql("agent", op.CONFIRM, { hostname: "compute2", digest });
    expect(other.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(other.errors?.[0]?.message).toMatch(/compute1/);
    for (const bad of ["v1:abc", digest.slice(3), `v2:${digest.slice(3)}`]) {
      const r = await t.gql("agent", op.CONFIRM, { hostname: "compute1", digest: bad });
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "digest" });
    }
    const host = await t.gql("admin", op.CONFIRM, { hostname: "bad host", digest });
    expect(host.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "hostname" });
  });

  it("refuses, naming the field, a nested attribute without its parent and a control path two devices claim; writes nothing", async () => {
    const head = await t.service.store.headPosition();
    const [d] = FAKE_HOST_DEVICES(2);
    const dep = d!.deployables[0]!;
    const orphan = [{ ...d!, deployables: [{ ...dep, attributes: [...dep.attributes, { key: "kpi", value: "1", parentKey: "function" }] }] }];
    const r1 = await t.gql("agent", REPORT_DIGEST, { hostname: "compute1", devices: orphan });
    expect(r1.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: `devices[0].deployables[0].attributes[${dep.attributes.length}].parentKey` });
    expect(r1.errors?.[0]?.message).toMatch(/no attribute with key function/);
    const twice = [{ ...d!, additionalControlPaths: [d!.controlPath] }];
    const r2 = await t.gql("agent", REPORT_DIGEST, { hostname: "compute1", devices: twice });
    expect(r2.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "devices[0].additionalControlPaths[0].info" });
    expect(await t.service.store.headPosition()).toBe(head);
  });
});

/** A GraphQL object literal for a flat JSON object of strings. */
function literal(o: Record<string, unknown>): string {
  return `{ ${Object.entries(o).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(", ")} }`;
}

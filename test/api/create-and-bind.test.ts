/**
 * createAndBindAcceleratorRequests: os-acc's plug as one call. It creates and binds, answers with
 * the bound ARQs and their handles, checks its input before it writes, and deletes what it created
 * when the bind is refused.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportOnce } from "../../src/clients/agent/agent.js";
import { createLogger } from "../../src/infra/logger.js";
import { fixtureEnv } from "../agent/drivers/fixture-env.js";
import { startTestService, TOKENS, type TestService } from "./harness.js";

const PLUG = `mutation($i: ID!, $r: [PlugProviderInput!]!, $n: String, $g: [JSON!], $p: String) {
  createAndBindAcceleratorRequests(instanceUuid: $i, providers: $r, deviceProfileName: $n, groups: $g, projectId: $p) {
    uuid state instanceUuid hostname deviceProfileGroupId attachHandleType attachHandleInfo
  }
}`;

let t: TestService;
let provider: { hostname: string; deviceRpUuid: string };

const arqCount = async () => (await t.ok("admin", `{ acceleratorRequests { totalCount } }`)).acceleratorRequests.totalCount as number;
const errorOf = (r: { errors?: Array<{ message: string; extensions?: Record<string, unknown> }> }) => ({
  code: r.errors?.[0]?.extensions?.code,
  field: r.errors?.[0]?.extensions?.field,
  message: r.errors?.[0]?.message,
});

beforeAll(async () => {
  t = await startTestService({ env: { MAX_BINDINGS_PER_MUTATION: "3" } });
  for (const [name, groups] of [
    ["one-fpga", [{ "resources:FPGA": "1" }]],
    ["two-groups", [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }]],
    ["four-fpgas", [{ "resources:FPGA": "4" }]],
  ] as const) {
    await t.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name, groups } });
  }
  await reportOnce({ client: { url: t.url, token: TOKENS.agent.token }, hostname: "compute1", drivers: ["fake"], env: fixtureEnv("no-accelerators", { hostname: "compute1" }), intervalMs: 60_000, log: createLogger("silent"), retries: 0, lastGood: new Map() });
  provider = { hostname: "compute1", deviceRpUuid: (await t.ok("service", `{ resourceProviders(hostname: "compute1") { uuid } }`)).resourceProviders[0].uuid };
});
afterAll(async () => {
  await t?.close();
});

describe("createAndBindAcceleratorRequests", () => {
  it("creates the profile's ARQs and answers them bound to the instance, with their handles", async () => {
    const instance = randomUUID();
    const { createAndBindAcceleratorRequests: arqs } = await t.ok("service", PLUG, { i: instance, r: [provider], n: "two-groups", p: "p1" });
    expect(arqs.map((a: any) => [a.state, a.instanceUuid, a.hostname, a.deviceProfileGroupId])).toEqual([
      ["BOUND", instance, "compute1", 0],
      ["BOUND", instance, "compute1", 1],
    ]);
    expect(arqs.every((a: any) => a.attachHandleType === "TEST_PCI" && a.attachHandleInfo.bus === "0c")).toBe(true);
    const listed = (await t.ok("service", `query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { uuid state projectId } } }`, { i: instance })).acceleratorRequests.nodes;
    expect(listed.map((a: any) => [a.uuid, a.state, a.projectId]).sort()).toEqual(arqs.map((a: any) => [a.uuid, "BOUND", "p1"]).sort());
  });

  it("creates from inline groups", async () => {
    const { createAndBindAcceleratorRequests: arqs } = await t.ok("service", PLUG, { i: randomUUID(), r: [provider], g: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] });
    expect(arqs.map((a: any) => a.state)).toEqual(["BOUND"]);
  });

  it("a second plug of the instance is refused on instanceUuid, and the ARQs it created are deleted again", async () => {
    const instance = randomUUID();
    await t.ok("service", PLUG, { i: instance, r: [provider], n: "one-fpga" });
    const before = await arqCount();
    const again = await t.gql("service", PLUG, { i: instance, r: [provider], n: "one-fpga" });
    expect(errorOf(again)).toMatchObject({ code: "CONFLICT", field: "instanceUuid" });
    expect(await arqCount()).toBe(before);
  });

  it("refuses bad input before it creates anything", async () => {
    const before = await arqCount();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ r: [provider], n: "one-fpga", g: [{ "resources:FPGA": "1" }] }, "BAD_USER_INPUT", "deviceProfileName"],
      [{ r: [provider] }, "BAD_USER_INPUT", "deviceProfileName"],
      [{ r: [], n: "one-fpga" }, "BAD_USER_INPUT", "providers"],
      [{ r: [{ hostname: "compute1", deviceRpUuid: "not-a-uuid" }], n: "one-fpga" }, "BAD_USER_INPUT", "providers[0].deviceRpUuid"],
      [{ r: [{ hostname: " ", deviceRpUuid: provider.deviceRpUuid }], n: "one-fpga" }, "BAD_USER_INPUT", "providers[0].hostname"],
      // Two providers for a request of one group: neither one per group nor one for all.
      [{ r: [provider, provider], n: "one-fpga" }, "BAD_USER_INPUT", "providers"],
      // Two providers for three groups: fewer than one per group.
      [{ r: [provider, provider], g: [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }, { "resources:FPGA": "1" }] }, "BAD_USER_INPUT", "providers"],
      // Four accelerators, three binds per call (MAX_BINDINGS_PER_MUTATION).
      [{ r: [provider], n: "four-fpgas" }, "BAD_USER_INPUT", "deviceProfileName"],
      [{ r: [provider], n: "no-such-profile" }, "NOT_FOUND", "deviceProfileName"],
    ];
    for (const [vars, code, field] of cases) {
      const r = await t.gql("service", PLUG, { i: randomUUID(), ...vars });
      expect({ vars, ...errorOf(r) }).toMatchObject({ vars, code, field });
    }
    expect(await arqCount()).toBe(before);
  });

  it("is the compute service's: a member may create ARQs but not bind them", async () => {
    const r = await t.gql("member", PLUG, { i: randomUUID(), r: [provider], n: "one-fpga" });
    expect(errorOf(r).code).toBe("FORBIDDEN");
  });
});

describe("MAX_BINDINGS_PER_MUTATION, one rule for both front doors", () => {
  const binding = () => ({ arqUuid: randomUUID(), hostname: "compute1", deviceRpUuid: provider.deviceRpUuid, instanceUuid: randomUUID() });

  it("GraphQL: bindAcceleratorRequests with more bindings than the limit is BAD_USER_INPUT on bindings", async () => {
    const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid } }`;
    const r = await t.gql("service", BIND, { b: [binding(), binding(), binding(), binding()] });
    expect(errorOf(r)).toMatchObject({ code: "BAD_USER_INPUT", field: "bindings", message: expect.stringContaining("at most 3") });
  });

  it("REST: a PATCH binding more ARQs than the limit answers 400", async () => {
    const patch = Object.fromEntries(
      [binding(), binding(), binding(), binding()].map((b) => [b.arqUuid, [{ path: "/hostname", op: "add", value: b.hostname }, { path: "/device_rp_uuid", op: "add", value: b.deviceRpUuid }, { path: "/instance_uuid", op: "add", value: b.instanceUuid }]]),
    );
    const res = await fetch(new URL("/v2/accelerator_requests", t.url), { method: "PATCH", headers: { "content-type": "application/json", "x-auth-token": TOKENS.service.token }, body: JSON.stringify(patch) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("at most 3");
  });
});

/**
 * A bind is checked against its request group, through the front doors clients use: a resource
 * provider that lacks a required trait, carries a forbidden one or offers another resource class
 * is refused with BAD_USER_INPUT (details.reason TARGET_MISMATCH) over GraphQL (HTTP and
 * WebSocket) and REST (400), and nothing of the call is kept.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindPatch, restClient } from "../rest/support.js";
import { FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const PLUG = `mutation($i: ID!, $r: [PlugProviderInput!]!, $n: String) {
  createAndBindAcceleratorRequests(instanceUuid: $i, providers: $r, deviceProfileName: $n) { uuid state }
}`;

// The fake device's provider: rc FPGA, traits CUSTOM_FAKE_DEVICE and OWNER_CYBORG.
const PROFILES: Array<[string, Record<string, string>, RegExp]> = [
  ["t4", { "resources:FPGA": "1", "trait:CUSTOM_NVIDIA_T4": "required" }, /lacks required trait CUSTOM_NVIDIA_T4/],
  ["no-fake", { "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "forbidden" }, /carries forbidden trait CUSTOM_FAKE_DEVICE/],
  ["gpu", { "resources:PGPU": "1" }, /offers resource class FPGA, the group asks for PGPU/],
];

describe("a bind checked against its request group", () => {
  let t: TestService;
  let rp: string;
  const rest = () => restClient(t.url);
  const createArq = async (name: string) => (await t.ok("service", op.CREATE_ARQS, { name })).createAcceleratorRequests[0].uuid as string;
  const arqState = async (uuid: string) => (await t.ok("admin", `query($u: ID!) { acceleratorRequest(uuid: $u) { state } }`, { u: uuid })).acceleratorRequest?.state;

  beforeAll(async () => {
    t = await startTestService();
    for (const [name, group] of [...PROFILES, ["fits", { "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required", "trait:CUSTOM_NVIDIA_T4": "forbidden" }] as const]) {
      await t.ok("admin", op.CREATE_PROFILE, { input: { name, groups: [group] } });
    }
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(4) });
    rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
  });
  afterAll(() => t?.close());

  it("over GraphQL (HTTP): BAD_USER_INPUT naming the binding, the provider and what does not fit; the ARQ stays INITIAL", async () => {
    for (const [name, , message] of PROFILES) {
      const arq = await createArq(name);
      const r = await t.gql("service", op.BIND, { bindings: [{ arqUuid: arq, hostname: "compute1", deviceRpUuid: rp, instanceUuid: randomUUID() }] });
      expect(r.errors?.[0]?.message, name).toMatch(message);
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "bindings[0].deviceRpUuid", details: { reason: "TARGET_MISMATCH", deviceRpUuid: rp } });
      expect(await arqState(arq)).toBe("INITIAL");
    }
  });

  it("over the WebSocket, the same error", async () => {
    const arq = await createArq("t4");
    const errors = await new Promise<Array<{ message: string; extensions?: Record<string, unknown> }>>((resolve, reject) => {
      let seen: Array<{ message: string; extensions?: Record<string, unknown> }> = [];
      t.ws("service").subscribe(
        { query: op.BIND, variables: { bindings: [{ arqUuid: arq, hostname: "compute1", deviceRpUuid: rp, instanceUuid: randomUUID() }] } },
        { next: (r) => void (seen = [...seen, ...((r.errors ?? []) as typeof seen)]), error: reject, complete: () => resolve(seen) },
      );
    });
    expect(errors[0]).toMatchObject({ message: expect.stringMatching(/lacks required trait CUSTOM_NVIDIA_T4/), extensions: { code: "BAD_USER_INPUT", details: { reason: "TARGET_MISMATCH" } } });
  });

  it("os-acc's create-and-bind is refused the same way and leaves no ARQ behind", async () => {
    const before = (await t.ok("admin", `{ acceleratorRequests { totalCount } }`)).acceleratorRequests.totalCount;
    const r = await t.gql("service", PLUG, { i: randomUUID(), r: [{ hostname: "compute1", deviceRpUuid: rp }], n: "gpu" });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", details: { reason: "TARGET_MISMATCH" } });
    expect((await t.ok("admin", `{ acceleratorRequests { totalCount } }`)).acceleratorRequests.totalCount).toBe(before);
  });

  it("over REST: PATCH answers 400 with the reason in Cyborg's envelope", async () => {
    const arq = await createArq("no-fake");
    const r = await rest().call("service", "PATCH", "/v2/accelerator_requests", { body: bindPatch([arq], { hostname: "compute1", rp, instance: randomUUID() }) });
    expect(r.status, r.text).toBe(400);
    expect(r.fault).toMatchObject({ code: "BAD_USER_INPUT", field: `${arq}/device_rp_uuid`, faultstring: expect.stringMatching(/carries forbidden trait CUSTOM_FAKE_DEVICE/) });
    expect(await arqState(arq)).toBe("INITIAL");
  });

  it("a provider that fits binds, over both doors", async () => {
    const viaGraphql = await createArq("fits");
    const [bound] = (await t.ok("service", op.BIND, { bindings: [{ arqUuid: viaGraphql, hostname: "compute1", deviceRpUuid: rp, instanceUuid: randomUUID() }] })).bindAcceleratorRequests;
    expect(bound.state).toBe("BOUND");
    const viaRest = await createArq("fits");
    expect((await rest().call("service", "PATCH", "/v2/accelerator_requests", { body: bindPatch([viaRest], { hostname: "compute1", rp, instance: randomUUID() }) })).status).toBe(202);
    expect(await arqState(viaRest)).toBe("BOUND");
  });
});

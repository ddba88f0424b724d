import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService, type Who } from "./harness.js";
import * as op from "./operations.js";

const ROLES = Object.keys(TOKENS) as Who[];

/** Each operation, and the roles allowed to call it (Cyborg's 2026 policy, cyborg-reference section 6). */
const MATRIX: Array<{ name: string; allowed: Who[]; query: string; variables?: () => Record<string, unknown> }> = [
  { name: "deviceProfiles", allowed: ["admin", "manager", "member", "member2", "reader", "service"], query: "{ deviceProfiles { name } }" },
  {
    name: "createDeviceProfile",
    allowed: ["admin"],
    query: op.CREATE_PROFILE,
    variables: () => ({ input: { name: `p-${randomUUID().slice(0, 8)}`, groups: [{ "resources:FPGA": "1" }] } }),
  },
  { name: "deleteDeviceProfiles", allowed: ["admin"], query: `mutation { deleteDeviceProfiles(names: ["no-such"]) }` },
  { name: "updateDeviceProfile", allowed: ["admin"], query: `mutation { updateDeviceProfile(input: { name: "no-such", description: "d" }) { version } }` },
  { name: "setDeviceProfileEnabled", allowed: ["admin"], query: `mutation { setDeviceProfileEnabled(name: "no-such", enabled: false) { enabled } }` },
  { name: "renameDeviceProfile", allowed: ["admin"], query: `mutation { renameDeviceProfile(name: "no-such", newName: "no-such-2") { name } }` },
  {
    name: "migrateDeviceProfiles",
    allowed: ["admin"],
    query: `mutation { migrateDeviceProfiles(mapping: { traits: { CUSTOM_NO_SUCH: "CUSTOM_NO_SUCH_2" } }, dryRun: true) { name } }`,
  },
  { name: "devices", allowed: ["admin", "manager"], query: "{ devices { totalCount } }" },
  { name: "deployables", allowed: ["admin", "manager"], query: "{ deployables { totalCount } }" },
  { name: "resourceProviders", allowed: ["admin", "manager", "service"], query: "{ resourceProviders { uuid } }" },
  { name: "setDeviceStatus", allowed: ["admin"], query: `mutation { setDeviceStatus(uuid: "${randomUUID()}", status: MAINTAINING) { uuid } }` },
  {
    name: "taintDevice",
    allowed: ["admin"],
    query: `mutation { taintDevice(uuid: "${randomUUID()}", taint: { key: "k", effect: NoSchedule, reason: "r" }) { uuid } }`,
  },
  { name: "untaintDevice", allowed: ["admin"], query: `mutation { untaintDevice(uuid: "${randomUUID()}", key: "k") { uuid } }` },
  {
    name: "reportHostInventory (compute1)",
    allowed: ["admin", "agent"],
    query: op.REPORT,
    variables: () => ({ hostname: "compute1", devices: FAKE_HOST_DEVICES(2) }),
  },
  {
    name: "confirmHostInventory (compute1)",
    allowed: ["admin", "agent"],
    query: op.CONFIRM,
    variables: () => ({ hostname: "compute1", digest: `v1:${"0".repeat(64)}` }),
  },
  { name: "acceleratorRequests", allowed: ["admin", "manager", "member", "member2", "reader", "service"], query: "{ acceleratorRequests { totalCount } }" },
  { name: "createAcceleratorRequests", allowed: ["admin", "manager", "member", "member2", "service"], query: op.CREATE_ARQS, variables: () => ({ name: "shared" }) },
  {
    name: "bindAcceleratorRequests",
    allowed: ["service"],
    query: op.BIND,
    variables: () => ({ bindings: [{ arqUuid: randomUUID(), hostname: "compute1", deviceRpUuid: randomUUID(), instanceUuid: randomUUID() }] }),
  },
  { name: "unbindAcceleratorRequests", allowed: ["service"], query: op.UNBIND, variables: () => ({ uuids: [randomUUID()] }) },
  { name: "deleteAcceleratorRequests by instance", allowed: ["service"], query: op.DELETE_ARQS, variables: () => ({ instance: randomUUID() }) },
  { name: "streamHistory", allowed: ["admin"], query: `{ streamHistory(stream: "host-compute1") { type } }` },
  { name: "events", allowed: ["admin"], query: "{ events(first: 1) { totalCount } }" },
];

describe("access control", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "shared", groups: [{ "resources:FPGA": "1" }] } });
  });
  afterAll(() => t?.close());

  for (const row of MATRIX) {
    it(`${row.name}: allowed for ${row.allowed.join(", ")}; FORBIDDEN for the others; UNAUTHENTICATED without a token`, async () => {
      for (const who of ROLES) {
        const r = await t.gql(who, row.query, row.variables?.() ?? {});
        const code = r.errors?.[0]?.extensions?.code;
        if (row.allowed.includes(who)) expect(code ?? "OK", `${who} should pass the policy`).not.toMatch(/FORBIDDEN|UNAUTHENTICATED/);
        else expect(code, `${who} should be refused`).toBe("FORBIDDEN");
      }
      const anon = await t.gql(null, row.query, row.variables?.() ?? {});
      expect(anon.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    });
  }

  it("an agent cannot report another host", async () => {
    const r = await t.gql("agent", op.REPORT, { hostname: "compute2", devices: FAKE_HOST_DEVICES(1) });
    expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(r.errors?.[0]?.message).toMatch(/compute1/);
  });

  it("ARQs are invisible to other projects", async () => {
    const [arq] = (await t.ok("member", op.CREATE_ARQS, { name: "shared" })).createAcceleratorRequests;
    expect(arq.projectId).toBe("p1");
    const q = `query($u: ID!) { acceleratorRequest(uuid: $u) { uuid } }`;
    expect((await t.ok("member", q, { u: arq.uuid })).acceleratorRequest.uuid).toBe(arq.uuid);
    expect((await t.ok("member2", q, { u: arq.uuid })).acceleratorRequest).toBeNull();
    const list2 = (await t.ok("member2", "{ acceleratorRequests { nodes { uuid } } }")).acceleratorRequests.nodes;
    expect(list2.map((a: any) => a.uuid)).not.toContain(arq.uuid);
    const del = await t.gql("member2", op.DELETE_ARQS, { uuids: [arq.uuid] });
    expect(del.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect((await t.ok("admin", q, { u: arq.uuid })).acceleratorRequest.uuid).toBe(arq.uuid);
    expect((await t.ok("member", op.DELETE_ARQS, { uuids: [arq.uuid] })).deleteAcceleratorRequests).toEqual([arq.uuid]);
  });

  it("a subscription without a token is refused at connection init", async () => {
    const client = t.ws(null);
    const err = await new Promise<unknown>((resolve) => {
      client.subscribe({ query: op.BOUND, variables: {} }, { next: () => undefined, error: resolve, complete: () => resolve("completed") });
    });
    expect(err).not.toBe("completed");
  });
});

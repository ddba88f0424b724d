/** The placement engine through GraphQL: explainPlacement, placementCapacity and placeAcceleratorRequests. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, TOKENS, type TestService } from "./harness.js";
import * as op from "./operations.js";
import { OsAcc } from "../../src/clients/osacc/index.js";
import { bindPatch, restClient } from "../rest/support.js";

let t: TestService;

const region = (host: string, handles: number, rc = "FPGA") => [
  {
    type: "FPGA",
    vendor: "0xABCD",
    model: "fake",
    controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
    deployables: [
      {
        name: `${host}_FakeDevice`,
        numAccelerators: handles,
        driverName: "fake",
        attributes: [{ key: "rc", value: rc }, { key: "trait0", value: "CUSTOM_FPGA_REGION_FAKE_R1" }],
        attachHandles: Array.from({ length: handles }, (_, i) => ({ type: "TEST_PCI", info: { domain: "0000", bus: "0c", device: "01", function: String(i) } })),
      },
    ],
  },
];

const PROFILE = `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`;

beforeAll(async () => {
  t = await startTestService();
  await t.ok("admin", op.REPORT, { hostname: "one", devices: region("one", 1) });
  await t.ok("admin", op.REPORT, { hostname: "three", devices: region("three", 3) });
  await t.ok("admin", PROFILE, { p: { name: "fpga-2", groups: [{ "resources:FPGA": "2" }] } });
  await t.ok("admin", PROFILE, { p: { name: "pgpu-else-fpga", groups: [{ "resources:PGPU": "1", "accel:alternatives": "resources:FPGA=1" }] } });
  await t.ok("admin", PROFILE, { p: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
  await t.ok("admin", PROFILE, { p: { name: "nope", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_NOPE": "required" }] } });
});
afterAll(async () => {
  await t?.close();
});

describe("placement", () => {
  it("counts capacity per host and in total, and with a host left out", async () => {
    const q = `query($n: String!, $w: PlacementWithoutInput) { placementCapacity(deviceProfileName: $n, without: $w) { total hosts { hostname count } } }`;
    expect((await t.ok("admin", q, { n: "pgpu-else-fpga" })).placementCapacity).toEqual({ total: 4, hosts: [{ hostname: "three", count: 3 }, { hostname: "one", count: 1 }] });
    expect((await t.ok("admin", q, { n: "fpga-2", w: { hosts: ["three"] } })).placementCapacity).toEqual({ total: 0, hosts: [] });
  });

  it("explains per host and provider why a profile does not fit", async () => {
    const q = `query($n: String!) { explainPlacement(deviceProfileName: $n) { hosts fitting byRule { rule hosts } detail { hostname ruledOut { rule message change } groups { providers { ruledOut { rule } } } } } }`;
    const e = (await t.ok("admin", q, { n: "nope" })).explainPlacement;
    expect(e).toMatchObject({ hosts: 2, fitting: 0, byRule: [{ rule: "TRAIT_MISSING", hosts: 2 }] });
    expect(e.detail[0].ruledOut.change).toContain("CUSTOM_NOPE");
  });

  it("GET /explain/v1/device-profiles/<name> answers the same over plain HTTP, to a token only", async () => {
    const url = new URL("/explain/v1/device-profiles/nope?detail=1", t.url);
    const ok = await fetch(url, { headers: { "x-auth-token": TOKENS.admin.token } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ hosts: 2, fitting: 0, byRule: [{ rule: "TRAIT_MISSING", hosts: 2 }], detail: [{ ruledOut: { rule: "TRAIT_MISSING" } }] });
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(new URL("/explain/v1/device-profiles/unknown", t.url), { headers: { "x-auth-token": TOKENS.admin.token } })).status).toBe(404);
  });

  it("places the ARQs where the engine chose, records the alternative, and refuses with the explanation when nothing fits", async () => {
    const m = `mutation($n: String!, $i: ID!) { placeAcceleratorRequests(deviceProfileName: $n, instanceUuid: $i) { hostname alternatives acceleratorRequests { uuid deviceRpUuid hostname state alternative } } }`;
    const placed = (await t.ok("service", m, { n: "fpga-2", i: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d01" })).placeAcceleratorRequests;
    expect(placed.hostname).toBe("three");
    expect(placed.alternatives).toEqual([0]);
    expect(placed.acceleratorRequests).toHaveLength(2);
    // A group without alternatives records none.
    expect(placed.acceleratorRequests.map((a: { alternative: number | null }) => a.alternative)).toEqual([null, null]);
    const again = await t.gql("service", m, { n: "fpga-2", i: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d02" });
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: "CONFLICT", details: { reason: "NO_PLACEMENT", explanation: { fitting: 0 } } });
    const alt = (await t.ok("service", m, { n: "pgpu-else-fpga", i: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d03" })).placeAcceleratorRequests;
    expect(alt.alternatives).toEqual([1]);
    // The ARQ itself records the way it got, in the log and in the read model.
    expect(alt.acceleratorRequests[0]).toMatchObject({ state: "BOUND", alternative: 1 });
    const read = await t.ok("service", `query($u: ID!) { acceleratorRequest(uuid: $u) { alternative } }`, { u: alt.acceleratorRequests[0].uuid });
    expect(read.acceleratorRequest.alternative).toBe(1);
  });

  it("os-acc's plug without a selected provider lets the engine choose, on its own compute node", async () => {
    const acc = new OsAcc({ url: t.url, token: TOKENS.service.token, hostname: "three" });
    const attached = await acc.plug({ uuid: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d04" }, null, { "accel:device_profile": "fpga-1" });
    expect(attached).toHaveLength(1);
    const { acceleratorRequests } = await t.ok("admin", `query { acceleratorRequests(filter: { instanceUuid: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d04" }) { nodes { hostname state } } }`);
    expect(acceleratorRequests.nodes).toEqual([{ hostname: "three", state: "BOUND" }]);
  });

  it("follows the read models between answers: a host reported since counts, and a host whose devices left does not", async () => {
    const q = `query($n: String!) { placementCapacity(deviceProfileName: $n) { total hosts { hostname count } } }`;
    await t.ok("admin", PROFILE, { p: { name: "feed-1", groups: [{ "resources:CUSTOM_FEED": "1" }] } });
    expect((await t.ok("admin", q, { n: "feed-1" })).placementCapacity).toEqual({ total: 0, hosts: [] });
    await t.ok("admin", op.REPORT, { hostname: "four", devices: region("four", 2, "CUSTOM_FEED") });
    expect((await t.ok("admin", q, { n: "feed-1" })).placementCapacity).toEqual({ total: 2, hosts: [{ hostname: "four", count: 2 }] });
    const m = `mutation($n: String!, $i: ID!) { placeAcceleratorRequests(deviceProfileName: $n, instanceUuid: $i) { hostname } }`;
    expect((await t.ok("service", m, { n: "feed-1", i: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d05" })).placeAcceleratorRequests.hostname).toBe("four");
    expect((await t.ok("admin", q, { n: "feed-1" })).placementCapacity).toEqual({ total: 1, hosts: [{ hostname: "four", count: 1 }] });
    await t.ok("admin", op.REPORT, { hostname: "five", devices: region("five", 1, "CUSTOM_FEED") });
    await t.ok("admin", op.REPORT, { hostname: "five", devices: [] });
    expect((await t.ok("admin", q, { n: "feed-1" })).placementCapacity).toEqual({ total: 1, hosts: [{ hostname: "four", count: 1 }] });
  });

  it("explains one ARQ (its group, its project's quota), and a bind refused on its provider carries the short form, over GraphQL and REST", async () => {
    await t.ok("admin", op.REPORT, { hostname: "six", devices: region("six", 1, "CUSTOM_BIND") });
    await t.ok("admin", PROFILE, { p: { name: "bind-1", groups: [{ "resources:CUSTOM_BIND": "1" }] } });
    const rp = (await t.ok("service", op.RPS, { hostname: "six" })).resourceProviders[0].uuid as string;
    const [first] = (await t.ok("member", op.CREATE_ARQS, { name: "bind-1" })).createAcceleratorRequests;
    const [second] = (await t.ok("member", op.CREATE_ARQS, { name: "bind-1" })).createAcceleratorRequests;
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: first.uuid, hostname: "six", deviceRpUuid: rp, instanceUuid: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d06" }] });

    // A provider that cannot take the group is refused at once (a busy one starts the bind, which waits).
    const fpga = (await t.ok("service", op.RPS, { hostname: "one" })).resourceProviders[0].uuid as string;
    const refused = await t.gql("service", op.BIND, { bindings: [{ arqUuid: second.uuid, hostname: "one", deviceRpUuid: fpga, instanceUuid: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d07" }] });
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      field: "bindings[0].deviceRpUuid",
      details: { explanation: { fitting: 0, byRule: expect.arrayContaining([{ rule: "NO_FREE_HANDLE", hosts: 1 }]), target: { hostname: "one", rpUuid: fpga, ruledOut: { rule: "RESOURCE_CLASS" } } } },
    });

    const rest = restClient(t.url);
    const r = await rest.call("service", "PATCH", "/v2/accelerator_requests", { body: bindPatch([second.uuid], { hostname: "one", rp: fpga, instance: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d08" }) });
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.fault).toMatchObject({ code: refused.errors![0]!.extensions!.code, details: { explanation: { target: { rpUuid: fpga, ruledOut: { rule: "RESOURCE_CLASS" } } } } });

    const q = `query($a: ID!) { explainPlacement(arqUuid: $a) { hosts fitting byRule { rule hosts } detail { hostname ruledOut { rule } }
      acceleratorRequest { uuid state } quota { projectId classes { resourceClass usage } } } }`;
    const e = (await t.ok("admin", q, { a: second.uuid })).explainPlacement;
    expect(e.acceleratorRequest).toEqual({ uuid: second.uuid, state: "INITIAL" });
    expect(e.quota.projectId).toBe(first.projectId);
    expect(e.quota.classes).toContainEqual({ resourceClass: "CUSTOM_BIND", usage: 2 });
    expect(e.fitting).toBe(0);
    expect(e.detail.find((d: { hostname: string }) => d.hostname === "six").ruledOut.rule).toBe("NO_FREE_HANDLE");
    // An ARQ of another project is not found for a project's token, as everywhere.
    const other = await t.gql("member2", q, { a: second.uuid });
    expect(other.errors?.[0]?.extensions?.code).toMatch(/NOT_FOUND|FORBIDDEN/);
    expect((await t.gql("admin", q.replace("arqUuid: $a", "arqUuid: $a, deviceProfileName: \"bind-1\""), { a: second.uuid })).errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});

/**
 * The Cyborg v2 REST API end to end over HTTP: version documents and microversions, the error
 * envelope, authentication and the policy table, device profiles and the hardware endpoints.
 * ARQs are in arqs.test.ts; the real OpenStack clients in openstack-clients.test.ts.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_HOST_DEVICES, startTestService, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { restClient, type RestResponse } from "./support.js";

let t: TestService;
let rest: ReturnType<typeof restClient>;
const call = (...args: Parameters<ReturnType<typeof restClient>["call"]>) => rest.call(...args);
const UUID_RE = /^[0-9a-f-]{36}$/;

beforeAll(async () => {
  t = await startTestService({ env: { MAX_BODY_BYTES: "8192" } });
  rest = restClient(t.url);
  await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(4) });
});
afterAll(() => t?.close());

function expectFault(r: RestResponse, status: number, code: string, message?: RegExp) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  expect(Object.keys(r.json)).toEqual(["error_message"]);
  expect(r.fault).toMatchObject({ faultcode: status >= 500 ? "Server" : "Client", debuginfo: null, code });
  if (message) expect(r.fault!.faultstring).toMatch(message);
  expect(r.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
}

describe("version documents and microversions", () => {
  it("GET / lists v2 (no token needed), under / and /accelerator", async () => {
    for (const path of ["/", "/accelerator", "/accelerator/"]) {
      const r = await call(null, "GET", path);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({
        name: "OpenStack Cyborg API",
        versions: [{ id: "v2", status: "CURRENT", min_version: "2.0", max_version: "2.3" }],
        default_version: { id: "v2" },
      });
      expect(r.json.versions[0].links[0]).toEqual({ href: `${rest.base}/accelerator/v2/`, rel: "self" });
    }
  });

  it("GET /v2 describes the version and sets the microversion headers", async () => {
    for (const path of ["/v2", "/v2/", "/accelerator/v2"]) {
      const r = await call(null, "GET", path);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ id: "v2.0", status: "CURRENT", min_version: "2.0", max_version: "2.3" });
      expect(r.headers.get("openstack-api-minimum-version")).toBe("2.0");
      expect(r.headers.get("openstack-api-maximum-version")).toBe("2.3");
      expect(r.headers.get("openstack-api-version")).toBe("accelerator 2.0");
      expect(r.headers.get("vary")).toBe("OpenStack-API-Version");
    }
    expect((await call(null, "GET", "/v2", { version: "latest" })).headers.get("openstack-api-version")).toBe("accelerator 2.3");
    expect((await call(null, "GET", "/v2", { version: 1 })).headers.get("openstack-api-version")).toBe("accelerator 2.1");
  });

  it("answers 406 in the envelope, with the range headers, for a version it does not serve", async () => {
    for (const v of ["accelerator 2.4", "accelerator 3.0", "accelerator 2.x"]) {
      const r = await call("admin", "GET", "/v2/device_profiles", { headers: { "openstack-api-version": v } });
      expectFault(r, 406, "NOT_ACCEPTABLE", /2\.0, 2\.3|accelerator 2\.N/);
      expect(r.headers.get("openstack-api-maximum-version")).toBe("2.3");
    }
  });

  it("serves resource paths without a version (Cyborg's root adds v2) and refuses unknown ones", async () => {
    expect((await call("admin", "GET", "/device_profiles")).status).toBe(200);
    expect((await call("admin", "GET", "/accelerator/v2/device_profiles")).status).toBe(200);
    expectFault(await call("admin", "GET", "/v2/flavors"), 404, "NOT_FOUND");
    expectFault(await call("admin", "GET", "/accelerator/flavors"), 404, "NOT_FOUND");
    expectFault(await call("admin", "GET", "/v2/devices/x/y/z"), 404, "NOT_FOUND");
    const r = await call("admin", "PUT", "/v2/device_profiles");
    expectFault(r, 405, "METHOD_NOT_ALLOWED");
    expect(r.headers.get("allow")).toBe("GET, POST, DELETE");
    // GraphQL keeps its path.
    expect((await call(null, "POST", "/graphql", { body: { query: "{ __typename }" } })).json).toEqual({ data: { __typename: "Query" } });
  });
});

describe("authentication and the policy table", () => {
  it("needs a known X-Auth-Token (401)", async () => {
    expectFault(await call(null, "GET", "/v2/device_profiles"), 401, "UNAUTHENTICATED", /X-Auth-Token/);
    expectFault(await call(null, "GET", "/v2/device_profiles", { headers: { "x-auth-token": "not-a-token-0123456789" } }), 401, "UNAUTHENTICATED");
    expectFault(
      await call("member", "GET", "/v2/device_profiles", { headers: { "x-service-token": "not-a-token-0123456789" } }),
      401,
      "UNAUTHENTICATED",
      /X-Service-Token/,
    );
    // A GraphQL bearer header is not a REST credential.
    expect((await call(null, "GET", "/v2/device_profiles", { headers: { authorization: "Bearer admin-token-0123456789" } })).status).toBe(401);
  });

  it("applies the same rules as GraphQL: hardware is for admins and managers, profiles are written by admins", async () => {
    for (const who of ["admin", "manager"] as const) expect((await call(who, "GET", "/v2/devices")).status).toBe(200);
    for (const who of ["member", "reader", "service"] as const) {
      expectFault(await call(who, "GET", "/v2/devices"), 403, "FORBIDDEN", /hardware:read/);
      expectFault(await call(who, "GET", "/v2/deployables"), 403, "FORBIDDEN");
      expectFault(await call(who, "GET", "/v2/attributes"), 403, "FORBIDDEN");
    }
    for (const who of ["admin", "manager", "member", "reader", "service"] as const) expect((await call(who, "GET", "/v2/device_profiles")).status).toBe(200);
    expectFault(await call("manager", "POST", "/v2/device_profiles", { body: [{ name: "x", groups: [{ "resources:FPGA": "1" }] }] }), 403, "FORBIDDEN", /device_profile:write/);
    expectFault(await call("agent", "GET", "/v2/accelerator_requests"), 403, "FORBIDDEN");
  });
});

describe("device profiles", () => {
  const groups = [{ "resources:FPGA": 1, "trait:CUSTOM_FAKE_DEVICE": "required" }];

  it("creates one from a one-item list: 201 with the profile itself, values as strings", async () => {
    const uuid = randomUUID();
    const r = await call("admin", "POST", "/v2/device_profiles", { body: [{ name: "dp-create", groups, description: "two words", uuid }] });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ uuid, name: "dp-create", description: "two words", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }], updated_at: null });
    expect(r.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    expect(r.json.links).toEqual([{ href: `${rest.base}/accelerator/v2/device_profiles/${uuid}`, rel: "self" }]);
    expect(Object.keys(r.json).sort()).toEqual(["created_at", "description", "groups", "links", "name", "updated_at", "uuid"]);
  });

  it("lists them, all or by name (a comma list)", async () => {
    await call("admin", "POST", "/v2/device_profiles", { body: [{ name: "dp-a", groups }] });
    await call("admin", "POST", "/v2/device_profiles", { body: [{ name: "dp-b", groups }] });
    const all = await call("reader", "GET", "/v2/device_profiles");
    expect(all.json.device_profiles.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["dp-a", "dp-b"]));
    const some = await call("reader", "GET", "/v2/device_profiles?name=dp-b,dp-a,nope");
    expect(some.json.device_profiles.map((p: { name: string }) => p.name)).toEqual(["dp-a", "dp-b"]);
    expect((await call("reader", "GET", "/v2/device_profiles?name=nope")).json).toEqual({ device_profiles: [] });
    expectFault(await call("reader", "GET", "/v2/device_profiles?names=dp-a"), 400, "BAD_USER_INPUT", /Unknown argument/);
  });

  it("shows one by uuid, and by name from 2.2, with GET-one's str() timestamps", async () => {
    const created = (await call("admin", "POST", "/v2/device_profiles", { body: [{ name: "dp-show", groups }] })).json;
    const byUuid = await call("reader", "GET", `/v2/device_profiles/${created.uuid}`);
    expect(byUuid.status).toBe(200);
    expect(byUuid.json.device_profile).toMatchObject({ uuid: created.uuid, name: "dp-show", updated_at: "None" });
    expect(byUuid.json.device_profile.created_at).toBe(created.created_at.replace("T", " "));
    expectFault(await call("reader", "GET", "/v2/device_profiles/dp-show"), 406, "NOT_ACCEPTABLE", /2\.2/);
    expect((await call("reader", "GET", "/v2/device_profiles/dp-show", { version: 2 })).json.device_profile.uuid).toBe(created.uuid);
    expectFault(await call("reader", "GET", `/v2/device_profiles/${randomUUID()}`), 404, "NOT_FOUND");
    expectFault(await call("reader", "GET", "/v2/device_profiles/nope", { version: 3 }), 404, "NOT_FOUND");
  });

  it("answers 4xx where Cyborg answers 500, with the offending field", async () => {
    const post = (body: unknown) => call("admin", "POST", "/v2/device_profiles", { body });
    expectFault(await post([{ groups }]), 400, "BAD_USER_INPUT", /name needed/);
    expectFault(await post([{ name: "", groups }]), 400, "BAD_USER_INPUT");
    expectFault(await post([{ name: "a".repeat(256), groups }]), 400, "BAD_USER_INPUT");
    expectFault(await post([{ name: "dp-nogroups" }]), 400, "BAD_USER_INPUT");
    const r = await post([{ name: "dp-bad", groups: [{ "resources:FPGA": "x" }] }]);
    expectFault(r, 400, "BAD_USER_INPUT", /Resources number x is invalid/);
    expect(r.fault!.field).toBe("groups[0].resources:FPGA");
    expectFault(await post([{ name: "a", groups }, { name: "b", groups }]), 400, "BAD_USER_INPUT", /Only one device profile/);
    expectFault(await post({ name: "a", groups }), 400, "BAD_USER_INPUT", /Only one device profile/);
    expectFault(await post("{not json"), 400, "BAD_USER_INPUT", /not valid JSON/);
    expectFault(await post(`[${JSON.stringify({ name: "big", groups, description: "x".repeat(9000) })}]`), 413, "PAYLOAD_TOO_LARGE", /MAX_BODY_BYTES/);
    const dup = (await post([{ name: "dp-dup", groups }])).json;
    expectFault(await post([{ name: "dp-dup", groups }]), 409, "CONFLICT", /already exists/);
    expectFault(await post([{ name: "dp-dup-uuid", groups, uuid: dup.uuid }]), 409, "CONFLICT");
  });

  it("deletes by uuid, by names in the path or ?value=, all or nothing", async () => {
    const one = (await call("admin", "POST", "/v2/device_profiles", { body: [{ name: "dp-del1", groups }] })).json;
    for (const n of ["dp-del2", "dp-del3", "dp-del4"]) await call("admin", "POST", "/v2/device_profiles", { body: [{ name: n, groups }] });
    expect((await call("admin", "DELETE", `/v2/device_profiles/${one.uuid}`)).status).toBe(204);
    expectFault(await call("admin", "DELETE", "/v2/device_profiles/dp-del2,nope"), 404, "NOT_FOUND");
    expect((await call("reader", "GET", "/v2/device_profiles?name=dp-del2")).json.device_profiles).toHaveLength(1);
    expect((await call("admin", "DELETE", "/v2/device_profiles/dp-del2,dp-del3")).status).toBe(204);
    expect((await call("admin", "DELETE", "/v2/device_profiles?value=dp-del4")).status).toBe(204);
    expect((await call("reader", "GET", "/v2/device_profiles?name=dp-del1,dp-del2,dp-del3,dp-del4")).json.device_profiles).toEqual([]);
    expectFault(await call("admin", "DELETE", "/v2/device_profiles"), 400, "BAD_USER_INPUT");
    expectFault(await call("admin", "DELETE", `/v2/device_profiles/${randomUUID()}`), 404, "NOT_FOUND");
    expectFault(await call("member", "DELETE", "/v2/device_profiles/dp-a"), 403, "FORBIDDEN");
  });

  it("refuses to delete a profile that ARQs use (409, where Cyborg fails on a foreign key)", async () => {
    await call("admin", "POST", "/v2/device_profiles", { body: [{ name: "dp-used", groups }] });
    const arqs = (await call("member", "POST", "/v2/accelerator_requests", { body: { device_profile_name: "dp-used" } })).json.arqs;
    expectFault(await call("admin", "DELETE", "/v2/device_profiles/dp-used"), 409, "CONFLICT", /accelerator request/);
    await call("member", "DELETE", `/v2/accelerator_requests?arqs=${arqs[0].uuid}`);
    expect((await call("admin", "DELETE", "/v2/device_profiles/dp-used")).status).toBe(204);
  });
});

describe("devices, deployables and attributes", () => {
  let device: any;
  let deployable: any;

  beforeAll(async () => {
    device = (await call("admin", "GET", "/v2/devices")).json.devices[0];
    deployable = (await call("admin", "GET", "/v2/deployables")).json.deployables[0];
  });

  it("lists and shows devices, with status from 2.3", async () => {
    expect(device).toMatchObject({ type: "FPGA", vendor: "0xABCD", model: "miss model info", hostname: "compute1", std_board_info: null, updated_at: null });
    expect(device).not.toHaveProperty("status");
    expect(device.uuid).toMatch(UUID_RE);
    const shown = await call("manager", "GET", `/v2/devices/${device.uuid}`, { version: 3 });
    expect(shown.json).toMatchObject({ uuid: device.uuid, status: "enabled" });
    expect(shown.json.links).toEqual([{ href: `${rest.base}/accelerator/v2/devices/${device.uuid}`, rel: "self" }]);
    expectFault(await call("admin", "GET", `/v2/devices/${randomUUID()}`), 404, "NOT_FOUND");
  });

  it("filters devices by type, vendor, hostname and filters.field=limit", async () => {
    const list = async (q: string) => (await call("admin", "GET", `/v2/devices?${q}`)).json.devices.length;
    expect(await list("type=FPGA&vendor=0xABCD&hostname=compute1")).toBe(1);
    expect(await list("type=GPU")).toBe(0);
    expect(await list("hostname=compute9")).toBe(0);
    expect(await list("filters.field=limit&filters.value=1")).toBe(1);
    expect(await list("filters.field=sort_dir&filters.value=asc")).toBe(1);
    expectFault(await call("admin", "GET", "/v2/devices?filters.field=colour&filters.value=red"), 400, "BAD_USER_INPUT", /filter field/);
    expectFault(await call("admin", "GET", "/v2/devices?filters.field=limit&filters.value=-1"), 400, "BAD_USER_INPUT");
    expectFault(await call("admin", "GET", "/v2/devices?filters.field=limit"), 400, "BAD_USER_INPUT");
    expectFault(await call("admin", "GET", "/v2/devices?model=x"), 400, "BAD_USER_INPUT", /Unknown argument/);
  });

  it("disables and enables a device (admin), 200 with no body", async () => {
    expectFault(await call("manager", "POST", `/v2/devices/${device.uuid}/disable`), 403, "FORBIDDEN", /device:status/);
    const off = await call("admin", "POST", `/v2/devices/${device.uuid}/disable`);
    expect([off.status, off.text]).toEqual([200, ""]);
    expect((await call("admin", "GET", `/v2/devices/${device.uuid}`, { version: 3 })).json.status).toBe("maintaining");
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0];
    expect(rp).toMatchObject({ total: 4, reserved: 4 });
    expect((await call("admin", "POST", `/v2/devices/${device.uuid}/enable`)).status).toBe(200);
    expect((await call("admin", "GET", `/v2/devices/${device.uuid}`, { version: 3 })).json.status).toBe("enabled");
    expectFault(await call("admin", "POST", `/v2/devices/${randomUUID()}/enable`), 404, "NOT_FOUND");
  });

  it("lists and shows deployables: attributes_list a JSON string, uuids where Cyborg has integer ids", async () => {
    expect(deployable).toMatchObject({ name: "compute1_FakeDevice", num_accelerators: 4, driver_name: "fake", parent_id: null, root_id: null, device_id: device.uuid, bitstream_id: null });
    expect(JSON.parse(deployable.attributes_list)).toEqual([{ rc: "FPGA" }, { trait0: "CUSTOM_FAKE_DEVICE" }]);
    expect(deployable.links.map((l: { rel: string }) => l.rel)).toEqual(["self", "bookmark"]);
    expect((await call("manager", "GET", `/v2/deployables/${deployable.uuid}`)).json).toEqual(deployable);
    const byName = async (n: string) => (await call("admin", "GET", `/v2/deployables?filters.field=name&filters.value=${n}`)).json.deployables.length;
    expect(await byName("compute1_FakeDevice")).toBe(1);
    expect(await byName("nope")).toBe(0);
    expectFault(await call("admin", "GET", `/v2/deployables/${randomUUID()}`), 404, "NOT_FOUND");
  });

  it("refuses a deployable's program without the admin role, for an unknown deployable or bitstream, or with another body (the agent's part: test/agent/programming.e2e)", async () => {
    const body = [{ op: "replace", path: "/program", value: [{ image_uuid: randomUUID() }] }];
    expectFault(await call("manager", "PATCH", `/v2/deployables/${deployable.uuid}/program`, { body }), 403, "FORBIDDEN", /deployable:program/);
    expectFault(await call("admin", "PATCH", `/v2/deployables/${randomUUID()}/program`, { body }), 404, "NOT_FOUND");
    expectFault(await call("admin", "PATCH", `/v2/deployables/${deployable.uuid}/program`, { body }), 404, "NOT_FOUND", /bitstream/i);
    expectFault(await call("admin", "PATCH", `/v2/deployables/${deployable.uuid}/program`, { body: [{ op: "add", path: "/bitstream_id", value: "x" }] }), 400, "BAD_USER_INPUT", /image_uuid/);
  });

  it("lists and shows attributes; writing them is the agent's (405)", async () => {
    const all = (await call("admin", "GET", "/v2/attributes")).json.attributes;
    expect(all.map((a: any) => [a.key, a.value, a.deployable_id])).toEqual([
      ["rc", "FPGA", deployable.uuid],
      ["trait0", "CUSTOM_FAKE_DEVICE", deployable.uuid],
    ]);
    expect((await call("admin", "GET", "/v2/attributes?key=rc")).json.attributes).toHaveLength(1);
    expect((await call("admin", "GET", `/v2/attributes?deployable_id=${deployable.uuid}&key=trait0`)).json.attributes).toHaveLength(1);
    expect((await call("admin", "GET", `/v2/attributes?deployable_id=${randomUUID()}`)).json.attributes).toEqual([]);
    const shown = await call("admin", "GET", `/v2/attributes/${all[0].uuid}`);
    expect(shown.json).toEqual(all[0]);
    expectFault(await call("admin", "GET", `/v2/attributes/${randomUUID()}`), 404, "NOT_FOUND");
    const post = await call("admin", "POST", "/v2/attributes", { body: { deployable_id: deployable.uuid, key: "trait1", value: "CUSTOM_Y" } });
    expectFault(post, 405, "METHOD_NOT_ALLOWED", /agent/);
    expect(post.headers.get("allow")).toBe("GET");
    expectFault(await call("admin", "DELETE", `/v2/attributes/${all[0].uuid}`), 405, "METHOD_NOT_ALLOWED");
    expectFault(await call("manager", "POST", "/v2/attributes", { body: {} }), 403, "FORBIDDEN");
  });
});

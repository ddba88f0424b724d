import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "./harness.js";
import * as op from "./operations.js";

type Case = [name: string, who: "admin" | "service" | "agent", query: string, variables: Record<string, unknown>, code: string, field?: RegExp];

const profile = (input: Record<string, unknown>) => ({ input: { name: `p${randomUUID().slice(0, 8)}`, ...input } });
const device = (patch: Record<string, unknown>, deployablePatch: Record<string, unknown> = {}) => {
  const d = structuredClone(FAKE_HOST_DEVICES(1)[0]!) as any;
  Object.assign(d, patch);
  Object.assign(d.deployables[0], deployablePatch);
  return { hostname: "compute1", devices: [d] };
};

const CASES: Case[] = [
  ["profile: empty name", "admin", op.CREATE_PROFILE, profile({ name: "", groups: [{ "resources:FPGA": "1" }] }), "BAD_USER_INPUT", /name/],
  ["profile: name with !", "admin", op.CREATE_PROFILE, profile({ name: "bad!", groups: [{ "resources:FPGA": "1" }] }), "BAD_USER_INPUT", /name/],
  ["profile: 256-character name", "admin", op.CREATE_PROFILE, profile({ name: "a".repeat(256), groups: [{ "resources:FPGA": "1" }] }), "BAD_USER_INPUT", /name/],
  ["profile: no groups", "admin", op.CREATE_PROFILE, profile({ groups: [] }), "BAD_USER_INPUT", /groups/],
  ["profile: an empty group", "admin", op.CREATE_PROFILE, profile({ groups: [{}] }), "BAD_USER_INPUT", /groups/],
  ["profile: a group that is not an object", "admin", op.CREATE_PROFILE, profile({ groups: ["FPGA"] }), "BAD_USER_INPUT", /groups/],
  ["profile: unknown key prefix", "admin", op.CREATE_PROFILE, profile({ groups: [{ "fake:FPGA": "1" }] }), "BAD_USER_INPUT", /groups/],
  ["profile: resource amount not a number", "admin", op.CREATE_PROFILE, profile({ groups: [{ "resources:FPGA": "fake" }] }), "BAD_USER_INPUT", /groups/],
  ["profile: resource amount zero", "admin", op.CREATE_PROFILE, profile({ groups: [{ "resources:FPGA": "0" }] }), "BAD_USER_INPUT", /groups/],
  ["profile: unknown resource class", "admin", op.CREATE_PROFILE, profile({ groups: [{ "resources:FAKE_RC": "1" }] }), "BAD_USER_INPUT", /groups/],
  ["profile: non-custom trait", "admin", op.CREATE_PROFILE, profile({ groups: [{ "resources:FPGA": "1", "trait:FAKE_TRAIT": "required" }] }), "BAD_USER_INPUT", /groups/],
  ["profile: trait value", "admin", op.CREATE_PROFILE, profile({ groups: [{ "resources:FPGA": "1", "trait:CUSTOM_X": "fake" }] }), "BAD_USER_INPUT", /groups/],
  ["profile: unknown accel key", "admin", op.CREATE_PROFILE, profile({ groups: [{ "resources:FPGA": "1", "accel:colour": "red" }] }), "BAD_USER_INPUT", /groups/],
  ["profile: bad uuid", "admin", op.CREATE_PROFILE, profile({ uuid: "not-a-uuid", groups: [{ "resources:FPGA": "1" }] }), "BAD_USER_INPUT", /uuid/],
  ["profile: groups of the wrong type", "admin", op.CREATE_PROFILE, { input: { name: "x", groups: "FPGA" } }, "BAD_USER_INPUT"],
  ["arqs: unknown profile", "service", op.CREATE_ARQS, { name: "no-such-profile" }, "NOT_FOUND"],
  ["arqs: group index out of range", "service", op.CREATE_ARQS, { name: "base", group: 7 }, "BAD_USER_INPUT", /group/i],
  ["arqs: wrong variable type", "service", op.CREATE_ARQS, { name: 12, group: "x" }, "BAD_USER_INPUT"],
  ["bind: no bindings", "service", op.BIND, { bindings: [] }, "BAD_USER_INPUT", /bindings/],
  [
    "bind: too many bindings",
    "service",
    op.BIND,
    { bindings: Array.from({ length: 101 }, () => ({ arqUuid: randomUUID(), hostname: "h", deviceRpUuid: randomUUID(), instanceUuid: randomUUID() })) },
    "BAD_USER_INPUT",
    /bindings/,
  ],
  ["bind: unknown ARQ", "service", op.BIND, { bindings: [{ arqUuid: randomUUID(), hostname: "compute1", deviceRpUuid: randomUUID(), instanceUuid: randomUUID() }] }, "NOT_FOUND"],
  ["bind: missing hostname", "service", op.BIND, { bindings: [{ arqUuid: randomUUID(), deviceRpUuid: randomUUID(), instanceUuid: randomUUID() }] }, "BAD_USER_INPUT"],
  ["unbind: empty list", "service", op.UNBIND, { uuids: [] }, "BAD_USER_INPUT", /arqUuids/],
  ["delete: both selectors", "service", op.DELETE_ARQS, { uuids: [randomUUID()], instance: randomUUID() }, "BAD_USER_INPUT"],
  ["delete: unknown ARQ", "service", op.DELETE_ARQS, { uuids: [randomUUID()] }, "NOT_FOUND"],
  ["report: bad host name", "admin", op.REPORT, { hostname: "bad host!", devices: [] }, "BAD_USER_INPUT", /hostname/],
  ["report: unknown device type", "agent", op.REPORT, device({ type: "TPU" }), "BAD_USER_INPUT"],
  ["report: PCI address not hex", "agent", op.REPORT, device({ controlPath: { type: "PCI", info: { domain: "zz", bus: "0c", device: "00", function: "0" } } }), "BAD_USER_INPUT", /controlPath/],
  ["report: negative accelerators", "agent", op.REPORT, device({}, { numAccelerators: -1 }), "BAD_USER_INPUT", /numAccelerators/],
  ["report: huge device list", "agent", op.REPORT, { hostname: "compute1", devices: Array.from({ length: 1025 }, () => FAKE_HOST_DEVICES(1)[0]) }, "BAD_USER_INPUT", /devices/],
];

describe("bad input gets a typed error and loses nothing", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "base", groups: [{ "resources:FPGA": "1" }] } });
  });
  afterAll(() => t?.close());

  for (const [name, who, query, variables, code, field] of CASES) {
    it(name, async () => {
      const before = await t.service.store.headPosition();
      const r = await t.gql(who, query, variables);
      expect(r.errors, JSON.stringify(r)).toBeDefined();
      const e = r.errors![0]!;
      expect(e.extensions?.code, e.message).toBe(code);
      if (field) expect(`${e.extensions?.field ?? ""} ${e.message}`).toMatch(field);
      expect(JSON.stringify(r)).not.toMatch(/stacktrace|at [A-Za-z]+ \(/);
      // Nothing was appended for a refused command.
      expect(await t.service.store.headPosition()).toBe(before);
    });
  }

  it("a duplicate profile name is a CONFLICT", async () => {
    const r = await t.gql("admin", op.CREATE_PROFILE, { input: { name: "base", groups: [{ "resources:GPU": "1" }] } });
    expect(r.errors?.[0]?.extensions?.code).toBe("CONFLICT");
  });

  it("an over-deep query is refused before it runs", async () => {
    const deep = `{ devices { nodes { deployables { parent { parent { parent { parent { parent { parent { parent { parent { parent { uuid } } } } } } } } } } } } }`;
    const r = await t.gql("admin", deep);
    expect(r.errors?.[0]?.extensions?.code).toBe("QUERY_TOO_COMPLEX");
  });

  it("the same guards hold over the WebSocket, and invalid documents are refused there", async () => {
    const client = t.ws("admin");
    const run = (query: string) =>
      new Promise<unknown[]>((resolve) => {
        client.subscribe({ query }, { next: () => undefined, error: (e) => resolve(e as unknown[]), complete: () => resolve([]) });
      });
    const deep = `{ devices { nodes { deployables { parent { parent { parent { parent { parent { parent { parent { parent { parent { uuid } } } } } } } } } } } } }`;
    expect(JSON.stringify(await run(deep))).toContain("QUERY_TOO_COMPLEX");
    expect(JSON.stringify(await run("subscription { acceleratorRequestBound { nope } }"))).toMatch(/Cannot query field/);
  });

  it("variables of the wrong type are BAD_USER_INPUT over the WebSocket too, as over HTTP", async () => {
    const client = t.ws("admin");
    const run = (query: string, variables: Record<string, unknown>) =>
      new Promise<Array<{ extensions?: { code?: string } }>>((resolve) => {
        let errors: Array<{ extensions?: { code?: string } }> = [];
        client.subscribe({ query, variables }, { next: (r) => void (errors = [...errors, ...(r.errors ?? [])]), error: (e) => resolve(e as never), complete: () => resolve(errors) });
      });
    const cases: Array<[string, Record<string, unknown>]> = [
      [`query($u: ID!) { acceleratorRequest(uuid: $u) { uuid } }`, { u: { a: 1 } }],
      [`mutation($s: DeviceStatus!, $u: ID!) { setDeviceStatus(status: $s, uuid: $u) { uuid } }`, { s: "x", u: null }],
      [`query($f: Int, $s: String!) { streamHistory(first: $f, stream: $s) { revision } }`, { f: [1.5e67, "x"], s: "host-x" }],
      [`query($f: DeployableFilter) { deployables(filter: $f) { totalCount } }`, { f: { deviceUuid: {}, nope: 1 } }],
    ];
    for (const [query, variables] of cases) {
      const overHttp = await t.gql("admin", query, variables);
      const overWs = await run(query, variables);
      expect(overWs.length, query).toBeGreaterThan(0);
      expect(overWs.map((e) => e.extensions?.code), query).toEqual(overHttp.errors!.map(() => "BAD_USER_INPUT"));
    }
  });

  it("a body over the limit gets 413, not-JSON gets 400", async () => {
    const big = await fetch(t.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.admin.token}` },
      body: JSON.stringify({ query: "{ deviceProfiles { name } }", pad: "x".repeat(2_000_000) }),
    });
    expect(big.status).toBe(413);
    // The rest of the body is not read: the connection closes after the answer.
    expect(big.headers.get("connection")).toBe("close");
    expect(((await big.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe("BAD_REQUEST");
    const bad = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(bad.status).toBe(400);
  });
});

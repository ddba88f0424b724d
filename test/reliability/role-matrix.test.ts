/**
 * The role x operation matrix, every cell, generated from the policy table and the schema: for
 * each query, mutation and subscription (and each argument-level rule) and each role's token, a
 * well-formed request over HTTP and over WebSocket. An allowed caller is never FORBIDDEN or
 * UNAUTHENTICATED, a refused one is FORBIDDEN, no token is UNAUTHENTICATED (over WebSocket: the
 * connection is refused, 4403). An operation without a policy rule or a docs/api.md row fails here.
 * The REST API's routes are walked the same way, from the router's own route table.
 */
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  type GraphQLInputType,
  type GraphQLSchema,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeHost } from "../../bench/lib/fake-host.js";
import { rootFields } from "../../bench/lib/reliability/graphql-cases.js";
import { RawWsSessions } from "../../bench/lib/reliability/raw-ws.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { ROLE_TOKENS, WHO, type Who } from "../../bench/lib/reliability/tokens.js";
import { gql, httpRequest, postGraphql, tokenFor, type Caller, type WsAnswer } from "../../bench/lib/reliability/wire.js";
import { POLICY } from "../../src/api/auth/policy.js";
import { getSchema } from "../../src/api/graphql/schema.js";
import { ROUTES } from "../../src/api/rest/router.js";
import { buildCli, type BuiltCli } from "../support/cli.js";
import { allowedBy, ANY_TOKEN, ARGUMENT_RULES, operations, readmeRows, rolesOfRule, type Operation } from "./policy-table.js";
import { REST_RULES, restRequest } from "./rest-policy.js";

const README = join(dirname(fileURLToPath(import.meta.url)), "../../docs/api.md");
const CALLERS: Array<Who | null> = [...WHO, null];

let built: BuiltCli;
let service: ServiceProcess;
let schema: GraphQLSchema;
let ws: RawWsSessions;
/** A BOUND ARQ each caller can see, for subscriptions that must get an event at once. */
const resolvedFor = new Map<Caller, string>();

beforeAll(async () => {
  [built, schema] = await Promise.all([buildCli(), getSchema()]);
  // The programming request left in flight below must outlive the whole matrix, however slow the machine.
  service = new ServiceProcess({ cli: built.cli, env: { BIND_TIMEOUT_S: "3600" } });
  await service.start();
  ws = new RawWsSessions(service.url);
  const url = service.url;
  await gql(url, "agent", `mutation($d: [DriverDeviceInput!]!) { reportHostInventory(hostname: "compute1", devices: $d) { revision } }`, { d: compute1Inventory() });
  await gql(url, "admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "matrix-1", groups: [{ "resources:FPGA": "1" }] } });
  const rps = (await gql(url, "service", `{ resourceProviders(hostname: "compute1") { uuid name } }`)).resourceProviders as Array<{ uuid: string; name: string }>;
  const rp = rps.find((r) => r.name.endsWith("compute1_FakeDevice"))!;
  // A programming request left in flight on the other region: programmingRequests sends it at once.
  const region = rps.find((r) => r.name.endsWith(programmableRegion.deployables[0]!.name))!;
  const { uploadBitstream } = await gql(url, "admin", `mutation($i: BitstreamInput!) { uploadBitstream(input: $i) { id } }`, {
    i: { name: "matrix.gbs", functionId: "nlb0", regionType: "r1", vendor: "fake", contentBase64: Buffer.from("matrix").toString("base64") },
  });
  const [deployable] = (await gql(url, "admin", `query($rp: ID) { deployables(filter: { rpUuid: $rp }) { nodes { uuid } } }`, { rp: region.uuid })).deployables.nodes;
  await gql(url, "admin", `mutation($u: ID!, $b: ID!) { programDeployable(uuid: $u, bitstreamId: $b) { uuid } }`, { u: deployable.uuid, b: uploadBitstream.id });
  for (const who of ["member", "member2"] as const) {
    const [arq] = (await gql(url, who, `mutation { createAcceleratorRequests(deviceProfileName: "matrix-1") { uuid } }`)).createAcceleratorRequests;
    await gql(url, "service", `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { state } }`, {
      b: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rp.uuid, instanceUuid: randomUUID() }],
    });
    resolvedFor.set(who, arq.uuid);
  }
  for (const who of CALLERS) if (!resolvedFor.has(who)) resolvedFor.set(who, resolvedFor.get(who === "member2" ? "member2" : "member")!);
  // Their device tainted NoExecute: acceleratorRequestEvicted sends their outstanding notices at once.
  const devices = (await gql(url, "admin", `{ devices { nodes { uuid deployables { rpUuid } } } }`)).devices.nodes as Array<{ uuid: string; deployables: Array<{ rpUuid: string }> }>;
  const device = devices.find((d) => d.deployables.some((x) => x.rpUuid === rp.uuid))!;
  await gql(url, "admin", `mutation($u: ID!, $t: TaintInput!) { taintDevice(uuid: $u, taint: $t) { uuid } }`, { u: device.uuid, t: { key: "example.com/matrix", effect: "NoExecute", reason: "the role matrix's eviction notices" } });
  for (const who of ["member", "member2"] as const) {
    const noticed = async () => (await gql(url, "admin", `query($u: ID!) { acceleratorRequest(uuid: $u) { eviction { deadline } } }`, { u: resolvedFor.get(who) })).acceleratorRequest?.eviction != null;
    for (let tries = 0; !(await noticed()); tries++) {
      if (tries > 600) throw new Error(`no eviction notice on ${who}'s ARQ after the NoExecute taint`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}, 240_000);
afterAll(async () => {
  ws?.close();
  await service?.remove();
  await built?.remove();
});

/** An FPGA region on compute1 beside fakeHost's device, that a bitstream of region type r1 fits. */
const programmableRegion = {
  type: "FPGA",
  vendor: "0xABCD",
  model: "matrix",
  controlPath: { type: "PCI", info: { domain: "0000", bus: "0d", device: "00", function: "0" } },
  deployables: [
    {
      name: "compute1_Region",
      numAccelerators: 1,
      driverName: "fake",
      attributes: [{ key: "rc", value: "FPGA" }, { key: "trait0", value: "CUSTOM_FPGA_FAKE_REGION_R1" }],
      attachHandles: [{ type: "TEST_PCI", info: { domain: "0000", bus: "0d", device: "00", function: "1" } }],
    },
  ],
};

const compute1Inventory = () => [...fakeHost("compute1", 8), programmableRegion];

/** A value that passes GraphQL's own validation, chosen by the argument's name where that matters. */
function plausible(type: GraphQLInputType, name: string, op: Operation, who: Caller): unknown {
  if (isNonNullType(type)) return plausible(type.ofType, name, op, who);
  const named = getNamedType(type);
  if (isListType(type)) {
    if (named.name === "DriverDeviceInput") return compute1Inventory(); // the same report: the region stays
    return [plausible(type.ofType, name, op, who)];
  }
  if (named.name === "ArqBindingInput") return { arqUuid: randomUUID(), hostname: "compute1", deviceRpUuid: randomUUID(), instanceUuid: randomUUID() };
  if (named.name === "DeviceProfileInput") return { name: `m-${randomUUID().slice(0, 8)}`, groups: [{ "resources:FPGA": "1" }] };
  if (isInputObjectType(named)) {
    return Object.fromEntries(Object.values(named.getFields()).filter((f) => isNonNullType(f.type)).map((f) => [f.name, plausible(f.type, f.name, op, who)]));
  }
  if (isEnumType(named)) return named.getValues()[0]!.value;
  switch (named.name) {
    case "Int":
      return 1;
    case "Boolean":
      return false;
    case "JSON":
      return name === "groups" ? { "resources:FPGA": "1" } : {};
    case "DateTime":
      return new Date().toISOString();
  }
  // A project's own (projectQuota): reading another project's is an argument rule (policy-table.ts).
  if (name === "projectId") return ROLE_TOKENS[who as Who]?.projectId ?? "p-none";
  if (/hostname/i.test(name)) return "compute1";
  if (name === "digest") return `v1:${"0".repeat(64)}`;
  if (name === "operation") return "reboot";
  if (name === "stream") return "host-compute1";
  if (/profile|^names?$/i.test(name)) return "matrix-1";
  return randomUUID();
}

/** A request for the operation with its required arguments (and `extra` ones), from `who`. */
function request(op: Operation, who: Caller, extra: Record<string, unknown> = {}) {
  const field = rootFields(schema).find((r) => r.kind === op.kind && r.field.name === op.name)!.field;
  const args = field.args.filter((a) => isNonNullType(a.type) || a.name in extra);
  const variables = Object.fromEntries(args.map((a) => [a.name, a.name in extra ? extra[a.name] : plausible(a.type, a.name, op, who)]));
  const decls = args.map((a) => `$${a.name}: ${String(a.type)}`).join(", ");
  const selection = isLeafType(getNamedType(field.type)) ? "" : "{ __typename }";
  const query = `${op.kind}${decls ? `(${decls})` : ""} { ${op.name}${args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(", ")})` : ""} ${selection} }`;
  return { query, variables };
}

const rolesOf = (whos: Who[]) => [...new Set(whos.flatMap((w) => [...ROLE_TOKENS[w].roles]))].sort();

const codesOf = (errors: unknown): string[] => (Array.isArray(errors) ? errors.map((e) => (e as { extensions?: { code?: string } })?.extensions?.code ?? "NO_CODE") : []);

/** What the caller got: "OK" or the error codes, "CLOSED <code>" when the socket was refused. */
async function answerOverHttp(op: Operation, who: Caller, extra?: Record<string, unknown>): Promise<string[]> {
  const r = await postGraphql(service.url, who, request(op, who, extra));
  const codes = codesOf(JSON.parse(r.text).errors);
  return codes.length ? codes : ["OK"];
}

async function answerOverWs(op: Operation, who: Caller, extra?: Record<string, unknown>): Promise<string[]> {
  const token = tokenFor(who);
  // A subscription names an ARQ already resolved that the caller can see: an allowed caller gets its event at once.
  // The audit feed (`events`) catches up from the log's start: its first event comes at once too.
  // acceleratorRequestEvicted names that ARQ, whose device is tainted NoExecute: its notice comes at once.
  const args = op.kind === "subscription" ? { arqUuids: [resolvedFor.get(who)], arqUuid: resolvedFor.get(who), after: "0", ...extra } : extra;
  const a: WsAnswer = await ws.run(String(who), token && `Bearer ${token}`, JSON.stringify(request(op, who, args)), 60_000, true);
  if (a.error && !Array.isArray(a.error)) return [`CLOSED ${(a.error as { code?: number }).code}`];
  const codes = [...a.nexts.flatMap((n) => codesOf(n.errors)), ...codesOf(a.error)];
  if (codes.length) return codes;
  return a.nexts.some((n) => n.data) ? ["OK"] : ["NO ANSWER"];
}

function judge(allowed: Who[], who: Who | null, codes: string[], transport: "http" | "ws"): string | undefined {
  const refusal = codes.find((c) => c === "FORBIDDEN" || c === "UNAUTHENTICATED" || c.startsWith("CLOSED"));
  if (who === null) {
    const expected = transport === "ws" ? "CLOSED 4403" : "UNAUTHENTICATED";
    return codes[0] === expected ? undefined : `no token: expected ${expected}, got ${codes.join(", ")}`;
  }
  if (allowed.includes(who)) {
    if (refusal || codes.includes("INTERNAL_SERVER_ERROR") || codes.includes("NO ANSWER")) return `${who} is allowed, got ${codes.join(", ")}`;
    return undefined;
  }
  return codes[0] === "FORBIDDEN" ? undefined : `${who} is refused, got ${codes.join(", ")}`;
}

describe("the policy table covers every operation", () => {
  it("every query, mutation and subscription names a policy rule", async () => {
    const unguarded = operations(await getSchema()).filter((o) => !o.rule || (o.rule !== ANY_TOKEN && !(o.rule in POLICY)));
    expect(unguarded.map((o) => `${o.kind}.${o.name}`)).toEqual([]);
  });

  it("docs/api.md's 'Who may do what' lists every operation with the roles of its rule (or of each argument's rule)", async () => {
    const rows = readmeRows(README);
    const missing: string[] = [];
    for (const op of operations(await getSchema())) {
      const bare = rows.filter((r) => r.operations.includes(op.name));
      const qualified = rows.filter((r) => r.operations.some((o) => o.startsWith(`${op.name}(`)));
      if (bare.length + qualified.length === 0) missing.push(op.name);
      for (const row of bare) expect([...row.roles].sort(), op.name).toEqual([...rolesOfRule(op.rule!)].sort());
      for (const row of qualified) {
        const written = row.operations.find((o) => o.startsWith(`${op.name}(`))!;
        const rule = ARGUMENT_RULES.find((a) => `${a.operation}(${a.label})` === written);
        expect(rule, `${written} has a docs/api.md row but no argument rule here`).toBeDefined();
        expect([...row.roles].sort(), written).toEqual(rolesOf(rule!.allowed));
      }
    }
    expect(missing, "operations without a docs/api.md row").toEqual([]);
  });
});

describe.each(["http", "ws"] as const)("every cell over %s", (transport) => {
  it("each operation: allowed callers pass the policy, the others are FORBIDDEN, no token is refused", async () => {
    const wrong: string[] = [];
    const ask = transport === "http" ? answerOverHttp : answerOverWs;
    for (const op of operations(schema)) {
      if (op.kind === "subscription" && transport === "http") continue; // subscriptions are served over WebSocket only
      const allowed = allowedBy(op.rule!);
      for (const who of CALLERS) {
        const verdict = judge(allowed, who, await ask(op, who), transport);
        if (verdict) wrong.push(`${op.kind}.${op.name}: ${verdict}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  it("each argument-level rule", async () => {
    const wrong: string[] = [];
    const ask = transport === "http" ? answerOverHttp : answerOverWs;
    for (const rule of ARGUMENT_RULES) {
      const op = operations(schema).find((o) => o.name === rule.operation)!;
      for (const who of CALLERS) {
        const verdict = judge(rule.allowed, who, await ask(op, who, rule.args), transport);
        if (verdict) wrong.push(`${op.name} (${rule.label}): ${verdict}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);
});

describe("every cell over REST", () => {
  it("every route and method has a policy row", () => {
    const routes = Object.entries(ROUTES).flatMap(([path, methods]) => Object.keys(methods ?? {}).map((m) => `${m} ${path}`));
    expect(routes.filter((r) => !(r in REST_RULES))).toEqual([]);
  });

  it("each route: allowed tokens pass the policy (not 401/403), the others get 403, no token 401", async () => {
    const wrong: string[] = [];
    const base = new URL(service.url).origin;
    for (const [route, rule] of Object.entries(REST_RULES)) {
      const allowed = rule === "service-token" ? allowedBy("arq:bind") : allowedBy(rule);
      for (const who of CALLERS) {
        const req = restRequest(route, who);
        const r = await httpRequest(base + req.path, req);
        const code = r.status >= 400 && r.text ? (JSON.parse(JSON.parse(r.text).error_message).code as string) : String(r.status);
        const expected = who === null ? "UNAUTHENTICATED" : allowed.includes(who) ? undefined : "FORBIDDEN";
        if (expected ? code !== expected : code === "FORBIDDEN" || code === "UNAUTHENTICATED" || r.status >= 500) {
          wrong.push(`${route} as ${who}: ${expected ? `expected ${expected}` : "allowed"}, got ${r.status} ${code}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);
});

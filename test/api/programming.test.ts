/**
 * The bitstream catalogue and FPGA programming through the front doors: GraphQL (queries,
 * mutations, the agents' programmingRequests subscription) and the HTTP content routes. The agent
 * is played by the test; test/agent/programming.e2e.test.ts runs the real one.
 */
import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { collect, startTestService, TOKENS, type TestService, type Who } from "./harness.js";
import { BIND, BOUND, CREATE_ARQS, CREATE_PROFILE, REPORT, type BoundEvent } from "./operations.js";

const BITSTREAM = "id name functionId functionName regionType vendor checksum size";
const UPLOAD = `mutation($input: BitstreamInput!) { uploadBitstream(input: $input) { ${BITSTREAM} } }`;
const REQUESTS = `subscription($hostname: String!) { programmingRequests(hostname: $hostname) {
  requestId hostname deployableUuid deployableName driverName controlPath bitstreamId bitstreamName checksum size functionId downloadPath requestedBy } }`;
const RESULT = `mutation($input: ProgrammingResultInput!) { reportProgrammingResult(input: $input) { recorded late } }`;
const DEPLOYABLE = `query($uuid: ID!) { deployable(uuid: $uuid) { uuid bitstreamId traits programming { requestId bitstreamId requestedBy }
  lastProgramming { outcome command durationMs reason } } }`;
const PROGRAM = `mutation($uuid: ID!, $b: ID!) { programDeployable(uuid: $uuid, bitstreamId: $b) { uuid programming { requestId bitstreamId requestedBy } } }`;

interface RequestMessage {
  programmingRequests: { requestId: string; deployableUuid: string; bitstreamId: string; checksum: string; downloadPath: string; controlPath: unknown; driverName: string; hostname: string };
}

const device = (host: string) => [
  {
    type: "FPGA",
    vendor: "0xABCD",
    model: "miss model info",
    controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
    deployables: [
      {
        name: `${host}_FakeDevice`,
        numAccelerators: 4,
        driverName: "fake",
        attributes: [
          { key: "rc", value: "FPGA" },
          { key: "trait0", value: "CUSTOM_FAKE_DEVICE" },
          { key: "trait1", value: "CUSTOM_FPGA_FAKE_REGION_R1" },
        ],
        attachHandles: [1, 2, 3, 4].map((f) => ({ type: "TEST_PCI", info: { domain: "0000", bus: "0c", device: "00", function: String(f) } })),
      },
    ],
  },
];

let t: TestService;
const bytes = Buffer.from("a green bitstream, as a test has it");
let bitstream: { id: string; checksum: string };
const http = (who: Who | null, path: string, init: RequestInit = {}) =>
  fetch(new URL(path, t.url), { ...init, headers: { ...(who ? { authorization: `Bearer ${TOKENS[who].token}` } : {}), ...(init.headers ?? {}) } });
const rp = rpUuidFor("compute1_FakeDevice");

beforeAll(async () => {
  t = await startTestService({ env: { BIND_TIMEOUT_S: "30" } });
  await t.ok("admin", REPORT, { hostname: "compute1", devices: device("compute1") });
  bitstream = (await t.ok("admin", UPLOAD, { input: { name: "nlb0.gbs", functionId: "nlb0", regionType: "r1", vendor: "fake", contentBase64: bytes.toString("base64") } }))
    .uploadBitstream;
});
afterAll(() => t?.close());

describe("the bitstream catalogue over GraphQL and HTTP", () => {
  it("takes an upload (admin) with its checksum, and refuses others and bad input", async () => {
    expect(bitstream.checksum).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
    const denied = await t.gql("member", UPLOAD, { input: { name: "x", contentBase64: "eA==" } });
    expect(denied.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const badContent = await t.gql("admin", UPLOAD, { input: { name: "x", contentBase64: "not base64!" } });
    expect(badContent.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.contentBase64" });
    const badName = await t.gql("admin", UPLOAD, { input: { name: "a b", contentBase64: "eA==" } });
    expect(badName.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "name" });
  });

  it("takes a streamed upload on POST /bitstreams and lists it", async () => {
    const res = await http("admin", "/bitstreams?name=big.gbs&functionId=big&regionType=r1&vendor=fake", { method: "POST", body: Buffer.alloc(3 << 20, 7) });
    expect(res.status).toBe(201);
    const big = (await res.json()) as { id: string; size: number };
    expect(big.size).toBe(3 << 20);
    expect((await http("member", "/bitstreams?name=x", { method: "POST", body: "x" })).status).toBe(403);
    const listed = (await t.ok("manager", `{ bitstreams { id } }`)).bitstreams.map((b: { id: string }) => b.id);
    expect(listed).toEqual(expect.arrayContaining([bitstream.id, big.id]));
    expect((await t.ok("admin", `mutation($id: ID!) { deleteBitstream(id: $id) }`, { id: big.id })).deleteBitstream).toBe(big.id);
  });

  it("serves the content to an admin with its checksum; an agent only what its host is asked to program", async () => {
    const res = await http("admin", `/bitstreams/${bitstream.id}/content`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-checksum")).toBe(bitstream.checksum);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    const agent = await http("agent", `/bitstreams/${bitstream.id}/content`);
    expect(agent.status).toBe(403);
    expect(((await agent.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe("FORBIDDEN");
    expect((await http(null, `/bitstreams/${bitstream.id}/content`)).status).toBe(401);
    expect((await http("admin", `/bitstreams/${randomUUID()}/content`)).status).toBe(404);
  });

  it("refuses to delete a bitstream a profile names", async () => {
    const b = (await t.ok("admin", UPLOAD, { input: { name: "named.gbs", contentBase64: "eA==" } })).uploadBitstream;
    await t.ok("admin", CREATE_PROFILE, { input: { name: "names-it", groups: [{ "resources:FPGA": "1", "accel:bitstream_id": b.id }] } });
    const r = await t.gql("admin", `mutation($id: ID!) { deleteBitstream(id: $id) }`, { id: b.id });
    expect(r.errors?.[0]).toMatchObject({ extensions: { code: "CONFLICT" }, message: expect.stringMatching(/device profile names-it names it/) });
  });
});

describe("programming through the agents' subscription", () => {
  it("an agent token subscribes for its own host only", async () => {
    const other = collect(t.ws("agent"), REQUESTS, { hostname: "compute2" });
    await expect(other.next(1, 5000)).rejects.toThrow(/FORBIDDEN|compute1/);
  });

  it("a bind needing the bitstream: the request reaches the agent, which downloads it; its report makes the bind BOUND", async () => {
    await t.ok("admin", CREATE_PROFILE, { input: { name: "fn-nlb0", groups: [{ "resources:FPGA": "1", "accel:function_id": "nlb0" }] } });
    const requests = collect<RequestMessage>(t.ws("agent"), REQUESTS, { hostname: "compute1" });
    const instance = randomUUID();
    const bound = collect<BoundEvent>(t.ws("service"), BOUND, { instance });
    await new Promise((r) => setTimeout(r, 200));
    const [arq] = (await t.ok("service", CREATE_ARQS, { name: "fn-nlb0" })).createAcceleratorRequests;
    const [started] = (await t.ok("service", BIND, { bindings: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: instance }] })).bindAcceleratorRequests;
    expect(started.state).toBe("BIND_STARTED");

    const [{ programmingRequests: r }] = await requests.next(1);
    expect(r).toMatchObject({ hostname: "compute1", bitstreamId: bitstream.id, checksum: bitstream.checksum, driverName: "fake", controlPath: { type: "PCI", info: { bus: "0c" } } });
    const download = await http("agent", r.downloadPath);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
    const during = (await t.ok("admin", DEPLOYABLE, { uuid: r.deployableUuid })).deployable;
    expect(during.programming).toMatchObject({ requestId: r.requestId, requestedBy: { kind: "bind", arqUuid: arq.uuid } });

    const answer = await t.ok("agent", RESULT, { input: { hostname: "compute1", deployableUuid: r.deployableUuid, requestId: r.requestId, ok: true, command: ["fake-program", "f"], durationMs: 12 } });
    expect(answer.reportProgrammingResult).toEqual({ recorded: true, late: false });
    const [event] = await bound.next(1);
    expect(event!.acceleratorRequestBound).toMatchObject({ tag: arq.uuid, status: "COMPLETED", arq: { state: "BOUND" } });
    const after = (await t.ok("admin", DEPLOYABLE, { uuid: r.deployableUuid })).deployable;
    expect(after).toMatchObject({ bitstreamId: bitstream.id, programming: null, lastProgramming: { outcome: "PROGRAMMED", command: ["fake-program", "f"], durationMs: 12 } });
    expect(after.traits).toContain("CUSTOM_FPGA_FAKE_FUNCTION_NLB0");
    // Another agent's token cannot report for this host.
    const forged = await t.gql("agent", RESULT, { input: { hostname: "compute2", deployableUuid: r.deployableUuid, requestId: r.requestId, ok: true, command: ["x"], durationMs: 1 } });
    expect(forged.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });

  it("requests made while no agent listened are sent when it subscribes; operator programming is refused while the region is in use", async () => {
    await t.ok("admin", REPORT, { hostname: "compute9", devices: device("compute9") });
    const b2 = (await t.ok("admin", UPLOAD, { input: { name: "other.gbs", functionId: "other", regionType: "r1", vendor: "fake", contentBase64: "eHl6" } })).uploadBitstream;
    const deployableUuid = (await t.ok("admin", `{ deployables(filter: { hostname: "compute9" }) { nodes { uuid } } }`)).deployables.nodes[0].uuid;
    const program = await t.ok("admin", PROGRAM, { uuid: deployableUuid, b: b2.id });
    expect(program.programDeployable.programming).toMatchObject({ bitstreamId: b2.id, requestedBy: { kind: "operator", principal: "admin" } });
    expect((await t.gql("service", PROGRAM, { uuid: deployableUuid, b: b2.id })).errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const late = collect<RequestMessage>(t.ws("admin"), REQUESTS, { hostname: "compute9" });
    const [{ programmingRequests: r }] = await late.next(1);
    expect(r).toMatchObject({ bitstreamId: b2.id, deployableUuid });

    const inUse = await t.gql("admin", PROGRAM, { uuid: (await t.ok("admin", `{ deployables(filter: { hostname: "compute1" }) { nodes { uuid } } }`)).deployables.nodes[0].uuid, b: b2.id });
    expect(inUse.errors?.[0]).toMatchObject({ extensions: { code: "CONFLICT" }, message: expect.stringMatching(/bound ARQs/) });
    expect((await t.gql("admin", PROGRAM, { uuid: randomUUID(), b: b2.id })).errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
});

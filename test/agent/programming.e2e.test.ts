/**
 * FPGA programming end to end: the service in this process, the real agent spawned as a user runs
 * it (`cyborg-es agent --drivers fake --fake-region-type r1 ...`), one host per case so that each
 * starts with a free region. Embedded catalogue here; programming-glance.e2e.test.ts with Glance.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/redis-server.js";
import { collect, startTestService, TOKENS, type TestService } from "../api/harness.js";
import { BOUND, CREATE_PROFILE, type BoundEvent } from "../api/operations.js";
import { bind, fpgaE2e, history, region, requests, UPLOAD } from "./support/fpga-e2e.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { OsAcc } from "../../src/clients/osacc/index.js";

const kit = fpgaE2e(["pre", "byid", "byfn", "unknown", "corrupt", "broken", "race", "restart", "offline", "restprog", "restfail", "osacc"]);
const { tokens } = kit;
const agentFor = kit.agentFor.bind(kit);
const cleanups: Array<() => Promise<void> | void> = [];
beforeAll(() => kit.build());
afterAll(async () => {
  await kit.stop();
  for (const c of cleanups.reverse()) await c();
});

interface Catalogue {
  a: { id: string; checksum: string };
  b: { id: string; checksum: string };
  corrupt: { id: string; checksum: string };
}

/** Bitstreams A (function nlb0) and B (nlb3) for region type r1, and profiles naming them. */
async function catalogue(t: TestService): Promise<Catalogue> {
  const upload = async (name: string, functionId: string, content: string) =>
    (await t.ok("admin", UPLOAD, { input: { name, functionId, regionType: "r1", vendor: "fake", contentBase64: Buffer.from(content).toString("base64") } })).uploadBitstream;
  const a = await upload("nlb0.gbs", "nlb0", "bitstream A, nlb0");
  const b = await upload("nlb3.gbs", "nlb3", "bitstream B, nlb3");
  const corrupt = await upload("rot.gbs", "rot", "bitstream C, it will rot on disk");
  const profile = (name: string, accel: Record<string, string>) =>
    t.ok("admin", CREATE_PROFILE, { input: { name, groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required", ...accel }] } });
  await profile("by-id-a", { "accel:bitstream_id": a.id });
  await profile("by-id-b", { "accel:bitstream_id": b.id });
  await profile("by-fn-nlb0", { "accel:function_id": "nlb0" });
  await profile("by-fn-pre", { "accel:function_id": "pre0" });
  await profile("by-id-rot", { "accel:bitstream_id": corrupt.id });
  await profile("unknown", { "accel:bitstream_id": randomUUID() });
  return { a, b, corrupt };
}

describe("programming at bind time, with the agent", () => {
  let t: TestService;
  let c: Catalogue;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-e2e-fpga-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    t = await startTestService({ env: { BIND_TIMEOUT_S: "30" }, overrides: { tokens: tokens() }, dataDir });
    cleanups.push(() => t.close());
    c = await catalogue(t);
  });

  it("a pre-programmed region (it reports the function) binds at once: no programming", async () => {
    const state = join(dataDir, "pre-state.json");
    writeFileSync(state, JSON.stringify({ pre_FakeDevice: { bitstreamId: randomUUID(), functionId: "pre0" } }));
    await agentFor(t, "pre", ["--fake-state", state]);
    expect((await region(t, "pre")).traits).toContain("CUSTOM_FPGA_FAKE_FUNCTION_PRE0");
    const b = await bind(t, "pre", "by-fn-pre");
    expect(b.started).toBe("BOUND");
    expect(await b.bound()).toMatchObject({ status: "COMPLETED" });
    expect(await requests(t, "pre")).toEqual([]);
  });

  it("by bitstream id: the agent programs the region, the bind is BOUND, and the region's history says who, what, how and how long", async () => {
    const agent = await agentFor(t, "byid", ["--fake-program-delay", "300"]);
    const b = await bind(t, "byid", "by-id-a");
    expect(b.started).toBe("BIND_STARTED");
    expect(await b.bound()).toMatchObject({ status: "COMPLETED", arq: { state: "BOUND" } });
    expect(await region(t, "byid")).toMatchObject({ bitstreamId: c.a.id, programming: null, lastProgramming: { outcome: "PROGRAMMED", durationMs: expect.any(Number) } });
    expect((await region(t, "byid")).traits).toContain("CUSTOM_FPGA_FAKE_FUNCTION_NLB0");
    const h = await history(t, "byid");
    const requested = h.find((e) => e.type === "RegionProgrammingRequested")!;
    expect(requested).toMatchObject({ data: { bitstream: { id: c.a.id, checksum: c.a.checksum }, requestedBy: { kind: "bind", arqUuid: b.arq } }, metadata: { principal: "service" } });
    const programmed = h.find((e) => e.type === "RegionProgrammed")!;
    expect(programmed).toMatchObject({ data: { command: ["fake-program", "--device", "0000:0c:00.0", "--region", "byid_FakeDevice", expect.stringMatching(/\.bin$/)], arqUuids: [b.arq] }, metadata: { principal: "agent-byid" } });
    // The agent's next reports keep what programming recorded.
    const before = h.length;
    await agent.waitFor((l) => l.msg === "inventory unchanged" && Date.parse(String(l.time)) > Date.parse(programmed.metadata.at as string), "a report after the programming");
    expect((await history(t, "byid")).length).toBe(before);
  });

  it("by function: the one bitstream providing it for the region's type is programmed", async () => {
    await agentFor(t, "byfn");
    const b = await bind(t, "byfn", "by-fn-nlb0");
    expect(await b.bound()).toMatchObject({ status: "COMPLETED" });
    expect((await region(t, "byfn")).bitstreamId).toBe(c.a.id);
  });

  it("an unknown bitstream fails the bind with a clear reason, and nothing is programmed", async () => {
    await agentFor(t, "unknown");
    const b = await bind(t, "unknown", "unknown");
    expect(await b.bound()).toMatchObject({ status: "FAILED", reason: expect.stringMatching(/^bitstream .* \(accel:bitstream_id\) is not in the embedded catalogue$/) });
    expect(await requests(t, "unknown")).toEqual([]);
  });

  it("a download that does not match its checksum never reaches the driver: the bind fails, the region is unchanged", async () => {
    const file = join(dataDir, "bitstreams", c.corrupt.checksum.slice("sha256:".length));
    const bytes = readFileSync(file);
    bytes[0] = bytes[0]! ^ 0xff;
    writeFileSync(file, bytes);
    await agentFor(t, "corrupt");
    const b = await bind(t, "corrupt", "by-id-rot");
    expect(await b.bound()).toMatchObject({ status: "FAILED", reason: expect.stringMatching(/checksum mismatch/) });
    expect(await region(t, "corrupt")).toMatchObject({ bitstreamId: null, lastProgramming: { outcome: "FAILED", command: null } });
    expect((await region(t, "corrupt")).traits.filter((x: string) => x.includes("_FUNCTION_"))).toEqual([]);
  });

  it("a driver that fails: the bind fails with the driver's message, the region's bitstream is unknown", async () => {
    await agentFor(t, "broken", ["--fake-program-fail", "PR region locked by another process"]);
    const b = await bind(t, "broken", "by-id-a");
    expect(await b.bound()).toMatchObject({ status: "FAILED", reason: expect.stringMatching(/PR region locked by another process/) });
    expect(await region(t, "broken")).toMatchObject({ bitstreamId: null, lastProgramming: { outcome: "FAILED", command: expect.arrayContaining(["fake-program"]) } });
  });

  it("REST PATCH /v2/deployables/{uuid}/program (Cyborg's patch) programs the region and answers the deployable once done", async () => {
    await agentFor(t, "restprog", ["--fake-program-delay", "200"]);
    const { uuid } = await region(t, "restprog");
    const program = (image: string) =>
      fetch(new URL(`/v2/deployables/${uuid}/program`, t.url), {
        method: "PATCH",
        headers: { "x-auth-token": TOKENS.admin.token, "content-type": "application/json" },
        body: JSON.stringify([{ op: "replace", path: "/program", value: [{ image_uuid: image }] }]),
      });
    const res = await program(c.b.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ uuid, bitstream_id: c.b.id });
    expect(await region(t, "restprog")).toMatchObject({ bitstreamId: c.b.id, lastProgramming: { outcome: "PROGRAMMED" } });
    // Asked again for what it runs: nothing to program, the same answer at once.
    expect((await program(c.b.id)).status).toBe(200);
    expect((await requests(t, "restprog")).length).toBe(1);
    const unknown = await program(randomUUID());
    expect(unknown.status).toBe(404);
  });

  it("REST program with a driver that fails: 502 PROGRAMMING_FAILED with the driver's message", async () => {
    await agentFor(t, "restfail", ["--fake-program-fail", "flash write error"]);
    const { uuid } = await region(t, "restfail");
    const res = await fetch(new URL(`/v2/deployables/${uuid}/program`, t.url), {
      method: "PATCH",
      headers: { "x-auth-token": TOKENS.admin.token, "content-type": "application/json" },
      body: JSON.stringify([{ op: "replace", path: "/program", value: [{ image_uuid: c.a.id }] }]),
    });
    expect(res.status).toBe(502);
    const fault = JSON.parse(((await res.json()) as { error_message: string }).error_message);
    expect(fault).toMatchObject({ code: "PROGRAMMING_FAILED", faultcode: "Server" });
    expect(fault.faultstring).toMatch(/flash write error/);
  });

  it("os-acc: initialize waits while the agent programs a region; a plug of an FPGA profile programs it and returns what to attach", async () => {
    await agentFor(t, "osacc", ["--fake-program-delay", "3000"]);
    const acc = new OsAcc({ url: t.url, token: TOKENS.service.token, hostname: "osacc", bindTimeoutMs: 30_000 });
    cleanups.push(() => acc.close());
    await acc.initialize("osacc", { timeoutMs: 5_000, pollMs: 50 });
    // An operator programs the region with B: until the agent is done, the host is not ready.
    await t.ok("admin", `mutation($u: ID!, $b: ID!) { programDeployable(uuid: $u, bitstreamId: $b) { uuid } }`, { u: (await region(t, "osacc")).uuid, b: c.b.id });
    await expect(acc.initialize("osacc", { timeoutMs: 100, pollMs: 20 })).rejects.toThrow(/still programming 1 FPGA region/);
    await acc.initialize("osacc", { timeoutMs: 30_000, pollMs: 50 });
    // Ready means programmed, and the read models show it already.
    expect(await region(t, "osacc")).toMatchObject({ bitstreamId: c.b.id, programming: null, lastProgramming: { outcome: "PROGRAMMED" } });
    // The flavor asks for bitstream A: the plug's bind programs the region, then answers.
    const rp = rpUuidFor("osacc_FakeDevice");
    const [attached, ...more] = await acc.plug({ uuid: randomUUID(), name: "vm", project: "p1" }, { uuid: rp, hostname: "osacc" }, { "accel:device_profile": "by-id-a" });
    expect(more).toEqual([]);
    expect(attached).toMatchObject({ hostdevXml: expect.stringContaining("<hostdev") });
    expect(await region(t, "osacc")).toMatchObject({ bitstreamId: c.a.id, programming: null, lastProgramming: { outcome: "PROGRAMMED" } });
    expect(await requests(t, "osacc")).toHaveLength(2);
  });

  it("two ARQs racing for one region with different bitstreams: one is programmed and BOUND, the other fails", async () => {
    await agentFor(t, "race", ["--fake-program-delay", "500"]);
    const [x, y] = await Promise.all([bind(t, "race", "by-id-a"), bind(t, "race", "by-id-b")]);
    const outcomes = await Promise.all([x.bound(), y.bound()]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["COMPLETED", "FAILED"]);
    expect(outcomes.find((o) => o.status === "FAILED")!.reason).toMatch(/being programmed with bitstream|cannot be reprogrammed/);
    expect(await requests(t, "race")).toHaveLength(1);
    const won = outcomes.find((o) => o.status === "COMPLETED")!.tag === x.arq ? c.a.id : c.b.id;
    expect((await region(t, "race")).bitstreamId).toBe(won);
  });
});

describe("a programming the service is restarted in the middle of", () => {
  it("completes once the service is back: the agent reconnects and reports, the bind is BOUND, once", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-e2e-restart-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = String(await freePort());
    const start = () => startTestService({ env: { BIND_TIMEOUT_S: "60", PORT: port }, overrides: { tokens: tokens() }, dataDir });
    let t = await start();
    await catalogue(t);
    const agent = await agentFor(t, "restart", ["--fake-program-delay", "2500"]);
    const b = await bind(t, "restart", "by-id-a");
    await agent.waitFor((l) => l.msg === "programming requested", "the request");
    await t.close();
    t = await start();
    cleanups.push(() => t.close());
    const events = collect<BoundEvent>(t.ws("service"), BOUND, { arqs: [b.arq] });
    const [event] = await events.next(1, 30_000);
    expect(event!.acceleratorRequestBound).toMatchObject({ status: "COMPLETED", arq: { state: "BOUND" } });
    const h = await history(t, "restart");
    expect(h.filter((e) => e.type === "RegionProgrammingRequested")).toHaveLength(1);
    expect(h.filter((e) => e.type === "RegionProgrammed")).toHaveLength(1);
  });
});

describe("an agent that never answers", () => {
  it("the bind fails after BIND_TIMEOUT_S and the region is not left marked as programmed", async () => {
    const t = await startTestService({ env: { BIND_TIMEOUT_S: "2" }, overrides: { tokens: tokens() } });
    cleanups.push(() => t.close());
    const c = await catalogue(t);
    // The host reported once, by an agent that then went away.
    const agent = await agentFor(t, "offline");
    await agent.stop();
    const b = await bind(t, "offline", "by-id-a");
    expect(b.started).toBe("BIND_STARTED");
    expect(await b.bound()).toMatchObject({ status: "FAILED", reason: expect.stringMatching(/BIND_TIMEOUT_S.*abandoned/) });
    const r = await region(t, "offline");
    expect(r).toMatchObject({ bitstreamId: null, programming: null, lastProgramming: { outcome: "ABANDONED" } });
    expect(r.bitstreamId).not.toBe(c.a.id);
    expect(r.traits.filter((x: string) => x.includes("_FUNCTION_"))).toEqual([]);
  });
});

/**
 * Programming at bind time through the application and the binder, the agent played by the test
 * (test/agent/programming.e2e.test.ts runs the real agent process).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { Binder } from "../../src/reactors/binder/binder.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import { findDeployable } from "../../src/domain/inventory/state.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { StepByStepStore } from "../reliability/step-store.js";
import { createLogger } from "../../src/infra/logger.js";
import { expectDomainRejection } from "../domain/decider-spec.js";
import { fpgaRegion, hostState, types, until } from "./support.js";

const HOST = "compute1";
const ctx = (over: Partial<CommandContext> = {}): CommandContext => ({
  principal: "nova",
  correlationId: randomUUID(),
  causationId: randomUUID(),
  at: new Date().toISOString(),
  projectId: "p1",
  isAdmin: true,
  ...over,
});
const region = (handles = 4, extra: string[] = []): DriverDevice => fpgaRegion(HOST, handles, extra);
const RP = rpUuidFor(`${HOST}_FakeDevice`);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: { timeoutMs?: number; devices?: DriverDevice[]; store?: EventStore } = {}) {
  const store = opts.store ?? new MemoryEventStore();
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-prog-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const app = new Application({ store, bitstreams: { contentDir: dir } });
  await app.reportHostInventory(ctx(), HOST, opts.devices ?? [region()]);
  const upload = (name: string, functionId: string) =>
    app.uploadBitstream(ctx({ principal: "admin" }), { name, functionId, regionType: "r1", vendor: "fake" }, Readable.from([Buffer.from(`${name} bits`)]));
  const a = await upload("a.gbs", "fa");
  const b = await upload("b.gbs", "fb");
  await app.createDeviceProfile(ctx(), { name: "by-id-a", groups: [{ "resources:FPGA": "1", "accel:bitstream_id": a.id }] });
  await app.createDeviceProfile(ctx(), { name: "by-id-b", groups: [{ "resources:FPGA": "1", "accel:bitstream_id": b.id }] });
  await app.createDeviceProfile(ctx(), { name: "by-fn-a", groups: [{ "resources:FPGA": "1", "accel:function_id": "fa" }] });
  const startBinder = async (timeoutMs = opts.timeoutMs ?? 60_000) => {
    const binder = new Binder({ store, app, log: createLogger("silent"), bindTimeoutMs: timeoutMs });
    await binder.start();
    cleanups.push(() => binder.stop());
    return binder;
  };
  const arq = async (profile: string) => (await app.createArqs(ctx(), { deviceProfileName: profile }))[0]!.uuid;
  const bind = (...arqUuids: string[]) =>
    app.startBinds(ctx(), arqUuids.map((arqUuid) => ({ arqUuid, hostname: HOST, deviceRpUuid: RP, instanceUuid: randomUUID() })), { allocate: true });
  const state = async (arqUuid: string) => (await app.getArq(arqUuid))!;
  const resolved = (arqUuid: string) => until(async () => ["BOUND", "BIND_FAILED"].includes((await state(arqUuid)).state), 5000).then(() => state(arqUuid));
  const regionNow = async () => findDeployable(await hostState(store, HOST), [...(await hostState(store, HOST)).deviceOfDeployable.keys()][0]!)!.deployable;
  const report = async (ok: boolean, reason?: string, command: string[] | null = ["fake-program", "x"]) => {
    const [r] = await app.programmingInFlight(HOST);
    return app.reportProgrammingResult(ctx({ principal: "agent:compute1" }), { hostname: HOST, deployableUuid: r!.deployableUuid, requestId: r!.requestId, ok, command, durationMs: 10, reason });
  };
  return { store, app, a, b, startBinder, arq, bind, state, resolved, regionNow, report };
}

describe("a bind that needs its region programmed", () => {
  it("waits in BIND_STARTED holding its handle; programmed, it is BOUND and the region runs the bitstream with its function trait", async () => {
    const t = await setup();
    await t.startBinder();
    const x = await t.arq("by-id-a");
    const [view] = await t.bind(x);
    expect(view!.state).toBe("BIND_STARTED");
    const [request] = await t.app.programmingInFlight(HOST);
    expect(request).toMatchObject({ bitstream: { id: t.a.id, checksum: t.a.checksum }, requestedBy: { kind: "bind", arqUuid: x }, driverName: "fake" });
    expect((await hostState(t.store, HOST)).allocations.has(x)).toBe(true);
    expect(await t.report(true)).toEqual({ recorded: true, late: false });
    expect(await t.resolved(x)).toMatchObject({ state: "BOUND" });
    expect(await t.regionNow()).toMatchObject({ bitstreamId: t.a.id, programming: null });
    expect([...(await t.regionNow()).attributes.values()].map((a) => a.value)).toContain("CUSTOM_FPGA_FAKE_FUNCTION_FA");
    expect(await t.app.programmingInFlight(HOST)).toEqual([]);
  });

  it("by function: the one bitstream for the region's type is programmed; a region already reporting the function binds at once", async () => {
    const t = await setup();
    await t.startBinder();
    const x = await t.arq("by-fn-a");
    await t.bind(x);
    expect((await t.app.programmingInFlight(HOST))[0]!.bitstream.id).toBe(t.a.id);
    await t.report(true);
    expect((await t.resolved(x)).state).toBe("BOUND");

    const pre = await setup({ devices: [region(4, ["CUSTOM_FPGA_FAKE_FUNCTION_FA"])] });
    const y = await pre.arq("by-fn-a");
    expect((await pre.bind(y))[0]!.state).toBe("BOUND");
    expect(await pre.app.programmingInFlight(HOST)).toEqual([]);
  });

  it("by function name or bitstream name: a region running another function is programmed, and refused while another ARQ uses it", async () => {
    const t = await setup();
    await t.startBinder();
    const nlb0 = await t.app.uploadBitstream(ctx({ principal: "admin" }), { name: "nlb0.gbs", functionId: "f0", functionName: "nlb0", regionType: "r1", vendor: "fake" }, Readable.from([Buffer.from("nlb0 bits")]));
    await t.app.createDeviceProfile(ctx(), { name: "by-fn-name", groups: [{ "resources:FPGA": "1", "accel:function_name": "nlb0" }] });
    await t.app.createDeviceProfile(ctx(), { name: "by-name-b", groups: [{ "resources:FPGA": "1", "accel:bitstream_name": "b" }] });
    // The region runs b (another function) and is free again.
    const first = await t.arq("by-name-b");
    await t.bind(first);
    expect((await t.app.programmingInFlight(HOST))[0]!.bitstream.id).toBe(t.b.id);
    await t.report(true);
    expect((await t.resolved(first)).state).toBe("BOUND");
    await t.app.deleteArqs(ctx(), { arqUuids: [first] });
    expect((await t.regionNow()).bitstreamId).toBe(t.b.id);

    const x = await t.arq("by-fn-name");
    expect((await t.bind(x))[0]!.state).toBe("BIND_STARTED");
    expect((await t.app.programmingInFlight(HOST))[0]!.bitstream).toMatchObject({ id: nlb0.id, functionId: "f0" });
    await t.report(true);
    expect((await t.resolved(x)).state).toBe("BOUND");
    const y = await t.arq("by-name-b");
    await t.bind(y);
    expect(await t.resolved(y)).toMatchObject({ state: "BIND_FAILED", bindFailureReason: expect.stringMatching(/cannot be reprogrammed with bitstream/) });
  });

  it("binds needing the same bitstream join one request; one needing another fails with a clear reason", async () => {
    const t = await setup();
    await t.startBinder();
    const [x, y, z] = [await t.arq("by-id-a"), await t.arq("by-fn-a"), await t.arq("by-id-b")];
    const views = await t.bind(x, y, z);
    expect(views.map((v) => v.state)).toEqual(["BIND_STARTED", "BIND_STARTED", "BIND_STARTED"]);
    expect(await t.app.programmingInFlight(HOST)).toHaveLength(1);
    expect(await t.resolved(z)).toMatchObject({ state: "BIND_FAILED", bindFailureReason: expect.stringMatching(new RegExp(`being programmed with bitstream ${t.a.id}.*needs bitstream ${t.b.id}`)) });
    await t.report(true);
    expect((await t.resolved(x)).state).toBe("BOUND");
    expect((await t.resolved(y)).state).toBe("BOUND");
    expect((await types(t.store, `host-${HOST}`)).filter((e) => e === "RegionProgrammingRequested")).toHaveLength(1);
  });

  it("the agent's report completes the waiting binds with it: BOUND as the report is answered, the binder not running", async () => {
    const t = await setup();
    const [x, y] = [await t.arq("by-id-a"), await t.arq("by-fn-a")];
    expect((await t.bind(x, y)).map((v) => v.state)).toEqual(["BIND_STARTED", "BIND_STARTED"]);
    expect(await t.report(true)).toEqual({ recorded: true, late: false });
    expect([(await t.state(x)).state, (await t.state(y)).state]).toEqual(["BOUND", "BOUND"]);
    expect(await t.regionNow()).toMatchObject({ bitstreamId: t.a.id, programming: null });
    // The same report again records nothing; a bind that moved on meanwhile is not revived.
    expect((await t.report(true).catch((e: Error) => e)) as unknown).toBeInstanceOf(Error);
    const z = await t.arq("by-id-b");
    await t.app.deleteArqs(ctx(), { arqUuids: [x, y] });
    await t.bind(z);
    await t.app.unbindArqs(ctx(), [z]);
    expect(await t.app.programmingInFlight(HOST)).toHaveLength(1);
    expect(await t.report(true)).toEqual({ recorded: true, late: false });
    expect((await t.state(z)).state).toBe("UNBOUND");
    expect((await t.regionNow()).bitstreamId).toBe(t.b.id);
  });

  it("two binds racing in separate calls for different bitstreams: never both succeed", async () => {
    const t = await setup();
    await t.startBinder();
    const [x, y] = [await t.arq("by-id-a"), await t.arq("by-id-b")];
    await Promise.all([t.bind(x), t.bind(y)]);
    await until(async () => (await t.app.programmingInFlight(HOST)).length === 1 && [await t.state(x), await t.state(y)].some((a) => a.state === "BIND_FAILED"));
    await t.report(true);
    const states = [(await t.resolved(x)).state, (await t.resolved(y)).state].sort();
    expect(states).toEqual(["BIND_FAILED", "BOUND"]);
  });

  it("a failed programming fails the waiting binds with the agent's reason and gives their handles back", async () => {
    const t = await setup();
    await t.startBinder();
    const x = await t.arq("by-id-a");
    await t.bind(x);
    await t.report(false, "checksum mismatch: expected sha256:aa, got sha256:bb", null);
    expect(await t.resolved(x)).toMatchObject({ state: "BIND_FAILED", bindFailureReason: expect.stringMatching(/checksum mismatch/) });
    await until(async () => !(await hostState(t.store, HOST)).allocations.has(x));
    expect((await t.regionNow()).bitstreamId).toBeNull();
  });

  it("a programming that outlives BIND_TIMEOUT_S fails the bind and leaves the region not running it; a late success does not revive the bind", async () => {
    const t = await setup({ timeoutMs: 300 });
    await t.startBinder();
    const x = await t.arq("by-id-a");
    await t.bind(x);
    const [request] = await t.app.programmingInFlight(HOST);
    expect(await t.resolved(x)).toMatchObject({ state: "BIND_FAILED", bindFailureReason: expect.stringMatching(/within 0.3 s \(BIND_TIMEOUT_S\): the programming of deployable compute1_FakeDevice .* was abandoned/) });
    expect(await t.regionNow()).toMatchObject({ programming: null, bitstreamId: null, lastProgramming: { outcome: "abandoned" } });
    const late = await t.app.reportProgrammingResult(ctx(), { hostname: HOST, deployableUuid: request!.deployableUuid, requestId: request!.requestId, ok: true, command: ["p"], durationMs: 900 });
    expect(late).toEqual({ recorded: true, late: true });
    expect((await t.regionNow()).bitstreamId).toBe(t.a.id);
    expect((await t.state(x)).state).toBe("BIND_FAILED");
  });

  it("a binder restarted after the report was recorded without its binds (EventStoreDB appends stream by stream) finishes them", async () => {
    const store = new StepByStepStore(new MemoryEventStore());
    const t = await setup({ store });
    const first = await t.startBinder();
    const x = await t.arq("by-id-a");
    await t.bind(x);
    await first.stop();
    // The report's host append is written; the bind's append after it is lost.
    store.arm(2, "error-before");
    await expect(t.report(true)).rejects.toThrow(/connection lost/);
    expect((await t.state(x)).state).toBe("BIND_STARTED");
    expect(await t.regionNow()).toMatchObject({ bitstreamId: t.a.id, programming: null });
    await t.startBinder();
    expect((await t.resolved(x)).state).toBe("BOUND");
  });

  it("an unknown bitstream fails the bind with a clear reason", async () => {
    const t = await setup();
    await t.startBinder();
    await t.app.createDeviceProfile(ctx(), { name: "unknown", groups: [{ "resources:FPGA": "1", "accel:bitstream_id": "0f000000-0000-4000-8000-00000000000f" }] });
    const x = await t.arq("unknown");
    await t.bind(x);
    expect(await t.resolved(x)).toMatchObject({ state: "BIND_FAILED", bindFailureReason: "bitstream 0f000000-0000-4000-8000-00000000000f (accel:bitstream_id) is not in the embedded catalogue" });
  });
});

describe("operator programming and the catalogue", () => {
  it("programDeployable requests the programming of a free region, and is refused while it has bound ARQs", async () => {
    const t = await setup();
    await t.startBinder();
    const deployableUuid = (await t.regionNow()).uuid;
    const admin = ctx({ principal: "admin" });
    const r = await t.app.programDeployable(admin, { hostname: HOST, deployableUuid, bitstreamId: t.a.id });
    expect(r).toMatchObject({ bitstream: { id: t.a.id }, requestedBy: { kind: "operator", principal: "admin" } });
    await t.report(true);
    expect((await t.regionNow()).bitstreamId).toBe(t.a.id);
    const x = await t.arq("by-id-a");
    expect((await t.bind(x))[0]!.state).toBe("BOUND");
    await expectDomainRejection(t.app.programDeployable(admin, { hostname: HOST, deployableUuid, bitstreamId: t.b.id }), "CONFLICT", "uuid", /bound ARQs/);
    await expectDomainRejection(t.app.programDeployable(admin, { hostname: HOST, deployableUuid, bitstreamId: randomUUID() }), "NOT_FOUND", "bitstreamId");
  });

  it("an agent gets the content only of a bitstream a request on its host names", async () => {
    const t = await setup();
    await t.startBinder();
    await expectDomainRejection(t.app.bitstreamContent(t.a.id, HOST), "FORBIDDEN", "id");
    await t.bind(await t.arq("by-id-a"));
    const { content } = await t.app.bitstreamContent(t.a.id, HOST);
    expect(Buffer.concat(await content.toArray()).toString()).toBe("a.gbs bits");
    await expectDomainRejection(t.app.bitstreamContent(t.b.id, HOST), "FORBIDDEN", "id");
    const admin = await t.app.bitstreamContent(t.b.id, null);
    expect(admin.bitstream.id).toBe(t.b.id);
    admin.content.destroy();
  });
});

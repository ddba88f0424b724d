import { describe, expect, it } from "vitest";
import { decideBind, type ArqBinding, type BindProgramming } from "../../../src/domain/arqs/bind.js";
import { arqDecider } from "../../../src/domain/arqs/decider.js";
import type { ArqEvent } from "../../../src/domain/arqs/events.js";
import type { Bitstream } from "../../../src/domain/bitstreams/bitstream.js";
import type { HostCommand } from "../../../src/domain/inventory/decider.js";
import type { InventoryEvent } from "../../../src/domain/inventory/events.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { chooseByName, chooseForFunction, chooseForFunctionName, type BitstreamNeed } from "../../../src/domain/inventory/programming.js";
import { findDeployable, type HostState } from "../../../src/domain/inventory/state.js";
import { expectDomainError } from "../decider-spec.js";
import { ARQ, created, later } from "../arqs/fixtures.js";
import { allocate, apply, at, bdf, decide, deployable, fold, fpga, HOST, release, report, reported, types } from "./fixtures.js";

const REGION_ID = "9926ab6d-6c92-5a68-aabc-a7d84c545738";
const REGION_TRAIT = "CUSTOM_FPGA_INTEL_REGION_9926AB6D_6C92_5A68_AABC_A7D84C545738";
const RP = rpUuidFor(`${HOST}_${bdf("af")}`);
const ARQ2 = "aaaaaaaa-0000-4000-8000-000000000002";

const bitstream = (id: string, functionId: string | null, over: Partial<Bitstream> = {}): Bitstream => ({
  id,
  name: `${id}.gbs`,
  functionId,
  functionName: null,
  regionType: REGION_ID,
  vendor: "intel",
  checksum: `sha256:${"a".repeat(64)}`,
  size: 10,
  createdAt: at,
  ...over,
});
const A = bitstream("0a000000-0000-4000-8000-00000000000a", "nlb0");
const B = bitstream("0b000000-0000-4000-8000-00000000000b", "nlb3");

/** An Intel region: rc, the device trait and its region type trait; `extra` traits after them. */
const region = (extra: string[] = [], handles = 4) =>
  fpga("af", {
    deployables: [
      deployable("af", {
        handles,
        attributes: [
          { key: "rc", value: "FPGA" },
          { key: "trait0", value: "CUSTOM_FPGA_INTEL" },
          { key: "trait1", value: REGION_TRAIT },
          ...extra.map((value, i) => ({ key: `trait${i + 2}`, value })),
        ],
      }),
    ],
  });
const host = (extra: string[] = []) => reported([region(extra)]);
const dep = (h: HostState) => [...[...h.devices.values()][0]!.deployables.values()][0]!;

const byId = (b: Bitstream | null, id = b!.id): BitstreamNeed => ({ by: "id", bitstreamId: id, bitstream: b, problem: b ? null : `bitstream ${id} is not in the catalogue` });
const byFunction = (functionId: string, b: Bitstream | null): BitstreamNeed => ({ by: "function", functionId, bitstream: b, problem: b ? null : "no bitstream" });

const arqState = (events: ArqEvent[]) => events.reduce(arqDecider.evolve, arqDecider.initialState());
const createdAs = (arqUuid: string): ArqEvent => ({ ...created, data: { ...created.data, arqUuid } }) as ArqEvent;
const target = (arqUuid = ARQ, instanceUuid = `vm-${arqUuid}`): ArqBinding => ({ arqUuid, hostname: HOST, deviceRpUuid: RP, instanceUuid });
const started = (t: ArqBinding): ArqEvent => ({ type: "ArqBindStarted", data: { ...t, projectId: "p1", at: later } });
const prog = (need: BitstreamNeed | null, requestId = "req-1"): BindProgramming => ({ need, requestId });
/** The binder's view of a bind already started (it fails what it cannot finish). */
const bindStarted = (h: HostState, need: BitstreamNeed | null, arqUuid = ARQ, requestId = "req-1") =>
  decideBind(arqState([createdAs(arqUuid), started(target(arqUuid))]), h, target(arqUuid), later, prog(need, requestId));
/** The mutation's view (a bind starting now). */
const bindNow = (h: HostState, need: BitstreamNeed | null, arqUuid = ARQ, requestId = "req-1") =>
  decideBind(arqState([createdAs(arqUuid)]), h, target(arqUuid), later, prog(need, requestId));

const programmed = (requestId = "req-1", command = ["fpgaconf", "x.gbs"]): HostCommand => ({
  type: "ReportRegionProgrammed",
  data: { hostname: HOST, deployableUuid: "", requestId, command, durationMs: 1200, at },
});
const failedReport = (requestId: string, command: string[] | null, reason = "fpgaconf: bad bitstream"): HostCommand => ({
  type: "ReportRegionProgrammingFailed",
  data: { hostname: HOST, deployableUuid: "", requestId, reason, command, durationMs: 50, at },
});
const abandon = (requestId = "req-1"): HostCommand => ({
  type: "AbandonRegionProgramming",
  data: { hostname: HOST, deployableUuid: "", requestId, reason: "programming did not complete within 60 s", at },
});
/** Commands name the region by uuid. */
const on = (h: HostState, c: HostCommand): HostCommand => ({ ...c, data: { ...c.data, deployableUuid: dep(h).uuid } }) as HostCommand;
const withHost = (h: HostState, events: readonly InventoryEvent[]) => fold(events, h);

/** A host whose region is being programmed with A for ARQ (its handle held). */
function programming(): HostState {
  const d = bindNow(host(), byId(A));
  return withHost(host(), d.host);
}

describe("a bind that needs a bitstream", () => {
  it("needs no programming on a region already running it (by id) or reporting its function (AFaaS pre-programmed)", () => {
    const runningA = withHost(programming(), decide(programming(), on(programming(), programmed())));
    const other = apply(runningA, release(ARQ));
    const d = bindNow(other, byId(A), ARQ2);
    expect(d.arq.map((e) => e.type)).toEqual(["ArqBindStarted", "ArqBound"]);
    expect(types(d.host)).toEqual(["AttachHandleAllocated"]);

    const preProgrammed = host(["CUSTOM_FPGA_INTEL_FUNCTION_NLB0"]);
    const f = bindNow(preProgrammed, byFunction("nlb0", null));
    expect(f.arq.map((e) => e.type)).toEqual(["ArqBindStarted", "ArqBound"]);
    expect(types(f.host)).toEqual(["AttachHandleAllocated"]);
  });

  it("holds its handle and requests the programming; the ARQ stays BIND_STARTED", () => {
    const d = bindNow(host(), byFunction("nlb0", A));
    expect(d.arq.map((e) => e.type)).toEqual(["ArqBindStarted"]);
    expect(types(d.host)).toEqual(["AttachHandleAllocated", "RegionProgrammingRequested"]);
    expect(d.host[1]!.data).toMatchObject({
      requestId: "req-1",
      bitstream: { id: A.id, checksum: A.checksum, functionId: "nlb0", size: 10, name: A.name },
      requestedBy: { kind: "bind", arqUuid: ARQ, instanceUuid: `vm-${ARQ}` },
      previousBitstreamId: null,
    });
    expect(dep(d.hostAfter!).programming).toMatchObject({ requestId: "req-1", bitstream: { id: A.id } });
    expect(d.arqAfter).toMatchObject({ arq: { state: "BIND_STARTED" } });
  });

  it("a bind needing the bitstream in flight joins the request: one programming for both", () => {
    const d = bindNow(programming(), byId(A), ARQ2, "req-2");
    expect(d.arq.map((e) => e.type)).toEqual(["ArqBindStarted"]);
    expect(types(d.host)).toEqual(["AttachHandleAllocated"]);
    // The binder, deciding again while the request is in flight, waits: nothing to append.
    const again = bindStarted(withHost(programming(), d.host), byId(A), ARQ2, "req-3");
    expect(again).toMatchObject({ arq: [], host: [] });
  });

  it("a bind needing a different bitstream than the one in flight is refused: the binder fails it with the reason", () => {
    const now = bindNow(programming(), byId(B), ARQ2, "req-2");
    expect(now).toMatchObject({ arq: [{ type: "ArqBindStarted" }], host: [] });
    const binder = bindStarted(programming(), byId(B), ARQ2, "req-2");
    expect(binder.host).toEqual([]);
    expect(binder.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(new RegExp(`being programmed with bitstream ${A.id}.*needs bitstream ${B.id}`)) } }]);
  });

  it("a bind needing another bitstream than the region's bound ARQs run is refused; a plain bind waits for no one but is refused while programming", () => {
    const runningA = withHost(programming(), decide(programming(), on(programming(), programmed())));
    const boundThenB = bindStarted(runningA, byId(B), ARQ2);
    expect(boundThenB.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(new RegExp(`runs bitstream ${A.id} for ARQ ${ARQ}`)) } }]);
    const plain = bindStarted(programming(), null, ARQ2);
    expect(plain.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(/is being programmed/) } }]);
    expect(bindStarted(runningA, null, ARQ2).arq.map((e) => e.type)).toEqual(["ArqBound"]);
  });

  it("an unresolved need (unknown id, no or several bitstreams) is refused with the catalogue's reason", () => {
    const d = bindStarted(host(), byId(null, "0c000000-0000-4000-8000-00000000000c"));
    expect(d.host).toEqual([]);
    expect(d.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: "bitstream 0c000000-0000-4000-8000-00000000000c is not in the catalogue" } }]);
  });
});

describe("the agent's reports", () => {
  it("programmed: the region runs the bitstream, its function trait says so, the waiting binds complete", () => {
    const joined = withHost(programming(), bindNow(programming(), byId(A), ARQ2, "req-2").host);
    const events = decide(joined, on(joined, programmed()));
    expect(types(events)).toEqual(["RegionProgrammed", "DeployableChanged", "AttributeSet"]);
    expect(events[0]!.data).toMatchObject({ requestId: "req-1", command: ["fpgaconf", "x.gbs"], durationMs: 1200, arqUuids: [ARQ, ARQ2], late: false });
    expect(events[1]!.data).toMatchObject({ changes: { bitstreamId: A.id } });
    expect(events[2]!.data).toMatchObject({ key: "trait2", value: "CUSTOM_FPGA_INTEL_FUNCTION_NLB0" });
    const after = withHost(joined, events);
    expect(dep(after)).toMatchObject({ bitstreamId: A.id, programming: null, lastProgramming: { requestId: "req-1", outcome: "programmed" } });
    for (const arq of [ARQ, ARQ2]) expect(bindStarted(after, byId(A), arq).arq.map((e) => e.type)).toEqual(["ArqBound"]);
    // The same report again is nothing new.
    expect(decide(after, on(after, programmed()))).toEqual([]);
  });

  it("a programmed function replaces the function trait the region reported, under the same key", () => {
    const h = host(["CUSTOM_FPGA_INTEL_FUNCTION_OLD"]);
    const p = withHost(h, bindNow(h, byId(A)).host);
    const events = decide(p, on(p, programmed()));
    expect(events.filter((e) => e.type === "AttributeSet").map((e) => e.data)).toMatchObject([{ key: "trait2", value: "CUSTOM_FPGA_INTEL_FUNCTION_NLB0" }]);
  });

  it("the host's next report of the programmed region changes nothing; one reporting another function makes its bitstream unknown", () => {
    const p = programming();
    const after = withHost(p, decide(p, on(p, programmed())));
    expect(report(after, [region(["CUSTOM_FPGA_INTEL_FUNCTION_NLB0"])]).events).toEqual([]);
    const changed = report(after, [region(["CUSTOM_FPGA_INTEL_FUNCTION_OTHER"])]).events;
    expect(changed).toContainEqual(expect.objectContaining({ type: "DeployableChanged", data: expect.objectContaining({ changes: { bitstreamId: null } }) }));
    expect(dep(withHost(after, changed)).bitstreamId).toBeNull();
  });

  it("failed before the driver ran (download, checksum): the region is unchanged; the waiting binds fail with the reason", () => {
    const p = programming();
    const events = decide(p, on(p, failedReport("req-1", null, "checksum mismatch")));
    expect(types(events)).toEqual(["RegionProgrammingFailed"]);
    expect(events[0]!.data).toMatchObject({ arqUuids: [ARQ], command: null, reason: "checksum mismatch" });
    const after = withHost(p, events);
    expect(dep(after)).toMatchObject({ programming: null, bitstreamId: null });
    expect(bindStarted(after, byId(A)).arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: "checksum mismatch" } }]);
    // Once its handle is released, the ARQ may bind again (a new request).
    const released = apply(after, release(ARQ));
    expect(types(bindNow(released, byId(A), ARQ, "req-9").host)).toEqual(["AttachHandleAllocated", "RegionProgrammingRequested"]);
  });

  it("failed after the driver ran: the region's bitstream and function traits are forgotten", () => {
    const h = host(["CUSTOM_FPGA_INTEL_FUNCTION_OLD"]);
    const p = withHost(h, bindNow(h, byId(A)).host);
    const events = decide(p, on(p, failedReport("req-1", ["fpgaconf", "x.gbs"])));
    expect(types(events)).toEqual(["RegionProgrammingFailed", "AttributeRemoved"]);
    expect(dep(withHost(p, events)).attributes.has("trait2")).toBe(false);
  });

  it("abandoned: the region is not marked as running the bitstream; a late success is recorded but the binds stay failed", () => {
    const p = programming();
    const abandoned = decide(p, on(p, abandon()));
    expect(types(abandoned)).toEqual(["RegionProgrammingAbandoned"]);
    expect(abandoned[0]!.data).toMatchObject({ requestId: "req-1", bitstreamId: A.id, arqUuids: [ARQ] });
    const after = withHost(p, abandoned);
    expect(dep(after)).toMatchObject({ programming: null, bitstreamId: null, lastProgramming: { outcome: "abandoned" } });
    expect(decide(after, on(after, abandon()))).toEqual([]);

    const late = decide(after, on(after, programmed()));
    expect(types(late)).toEqual(["RegionProgrammed", "DeployableChanged", "AttributeSet"]);
    expect(late[0]!.data).toMatchObject({ late: true, arqUuids: [] });
    const lateAfter = withHost(after, late);
    expect(dep(lateAfter).bitstreamId).toBe(A.id);
    expect(bindStarted(lateAfter, byId(A)).arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(/within 60 s/) } }]);
  });

  it("refuses reports of requests it does not know, and a success after a failure", () => {
    const p = programming();
    expectDomainError(() => decide(p, on(p, programmed("req-x"))), "NOT_FOUND", "requestId");
    const failedAfter = withHost(p, decide(p, on(p, failedReport("req-1", null))));
    expectDomainError(() => decide(failedAfter, on(failedAfter, programmed())), "CONFLICT", "requestId");
    expectDomainError(() => decide(p, on(p, { ...programmed(), data: { ...programmed().data, command: [] } } as HostCommand)), "BAD_USER_INPUT", "command");
  });
});

describe("operator programming", () => {
  const request = (h: HostState, b = A, requestId = "op-1"): HostCommand => ({
    type: "RequestRegionProgramming",
    data: { hostname: HOST, deployableUuid: dep(h).uuid, requestId, bitstream: { id: b.id, name: b.name, checksum: b.checksum, size: b.size, functionId: b.functionId }, principal: "admin", at },
  });
  it("requests the programming of a free region, recording who asked", () => {
    const events = decide(host(), request(host()));
    expect(events).toMatchObject([{ type: "RegionProgrammingRequested", data: { requestId: "op-1", requestedBy: { kind: "operator", principal: "admin" } } }]);
  });
  it("is refused while the region has bound ARQs or another bitstream is in flight; a no-op for what it runs or is getting", () => {
    const used = apply(host(), allocate(RP, ARQ));
    expectDomainError(() => decide(used, request(used)), "CONFLICT", "uuid", /has bound ARQs/);
    const p = withHost(host(), decide(host(), request(host())));
    expect(decide(p, request(p, A, "op-2"))).toEqual([]);
    expectDomainError(() => decide(p, request(p, B, "op-2")), "CONFLICT", "uuid", /being programmed/);
    const done = withHost(p, decide(p, on(p, programmed("op-1"))));
    expect(decide(done, request(done, A, "op-3"))).toEqual([]);
    expect(findDeployable(done, dep(done).uuid)!.deployable.bitstreamId).toBe(A.id);
  });
});

describe("chooseForFunction: the one bitstream providing the function for the region's type", () => {
  const r = dep(host());
  it("picks the bitstream built for the region's type, ignoring those for other types", () => {
    const otherType = bitstream("0d000000-0000-4000-8000-00000000000d", "nlb0", { regionType: "ffff" });
    expect(chooseForFunction("nlb0", [otherType, A], r)).toMatchObject({ bitstream: { id: A.id }, problem: null });
  });
  it("none or several is a clear problem", () => {
    expect(chooseForFunction("nlb0", [], r).problem).toMatch(new RegExp(`no bitstream in the catalogue provides function nlb0 for the region type of deployable .*${REGION_TRAIT}`));
    const twin = bitstream("0e000000-0000-4000-8000-00000000000e", "nlb0");
    expect(chooseForFunction("nlb0", [A, twin], r).problem).toMatch(/several bitstreams provide function nlb0 .*accel:bitstream_id/);
  });
  it("a bitstream without a vendor fits any vendor's region of its type", () => {
    expect(chooseForFunction("nlb0", [{ ...A, vendor: null }], r).bitstream?.id).toBe(A.id);
  });
});

describe("accel:function_name and accel:bitstream_name choose the bitstream as function_id and bitstream_id do", () => {
  const r = dep(host());
  const nlb0 = { ...A, name: "nlb0.gbs", functionName: "nlb0" };
  const nlb3 = { ...B, name: "nlb3.gbs", functionName: "nlb3" };
  const running = (b: Bitstream) => {
    const d = bindNow(host(), byId(b));
    const h = withHost(host(), d.host);
    return apply(withHost(h, decide(h, on(h, programmed()))), release(ARQ));
  };
  it("by function name: the one bitstream declaring it that is built for the region", () => {
    const otherType = { ...nlb0, id: "0d000000-0000-4000-8000-00000000000d", regionType: "ffff" };
    expect(chooseForFunctionName("nlb0", [otherType, nlb0, nlb3], r)).toEqual({ by: "functionName", functionName: "nlb0", bitstream: nlb0, problem: null });
    expect(chooseForFunctionName("nlb9", [nlb0], r).problem).toMatch(/no bitstream in the catalogue provides function name nlb9/);
  });
  it("by bitstream name, with or without the type suffix; of several of one name, the one built for the region", () => {
    expect(chooseByName("nlb0.gbs", [nlb0, nlb3], r).bitstream).toEqual(nlb0);
    expect(chooseByName("nlb0", [nlb0, nlb3], r).bitstream).toEqual(nlb0);
    expect(chooseByName("nlb0.aocx", [nlb0], r).bitstream).toBeNull();
    const elsewhere = { ...nlb0, id: "0d000000-0000-4000-8000-00000000000d", regionType: "ffff" };
    expect(chooseByName("nlb0", [elsewhere, nlb0], r).bitstream).toEqual(nlb0);
    expect(chooseByName("nlb0", [elsewhere], r).bitstream).toEqual(elsewhere);
  });
  it("a region running nlb3 is programmed with nlb0 for accel:function_name=nlb0, not bound as it is", () => {
    const h = running(nlb3);
    expect(dep(h).bitstreamId).toBe(nlb3.id);
    const need = chooseForFunctionName("nlb0", [nlb0, nlb3], dep(h));
    const d = bindNow(h, need, ARQ2);
    expect(d.arq.map((e) => e.type)).toEqual(["ArqBindStarted"]);
    expect(types(d.host)).toEqual(["AttachHandleAllocated", "RegionProgrammingRequested"]);
    expect(d.host[1]!.data).toMatchObject({ bitstream: { id: nlb0.id }, previousBitstreamId: nlb3.id });
  });
  it("a region already running the function or the named bitstream is bound at once", () => {
    const h = running(nlb0);
    expect(bindNow(h, chooseForFunctionName("nlb0", [nlb0], dep(h)), ARQ2).arq.map((e) => e.type)).toEqual(["ArqBindStarted", "ArqBound"]);
    expect(bindNow(h, chooseByName("nlb0.gbs", [nlb0], dep(h)), ARQ2).arq.map((e) => e.type)).toEqual(["ArqBindStarted", "ArqBound"]);
  });
  it("a region that runs another function for a bound ARQ is refused; so is a name the catalogue lacks", () => {
    const h = running(nlb3);
    const inUse = withHost(h, bindNow(h, chooseForFunctionName("nlb3", [nlb3], dep(h)), ARQ2).host);
    const refused = decideBind(arqState([createdAs(ARQ), started(target(ARQ))]), inUse, target(ARQ), later, prog(chooseForFunctionName("nlb0", [nlb0], dep(inUse))));
    expect(refused.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(/cannot be reprogrammed with bitstream/) } }]);
    const missing = bindStarted(host(), chooseByName("nlb7.gbs", [nlb0], r));
    expect(missing.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(/no bitstream in the catalogue provides bitstream name nlb7.gbs/) } }]);
  });
});

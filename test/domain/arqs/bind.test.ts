import { describe, expect, it } from "vitest";
import { checkProvidersCover, decideBind, validateBindings, type ArqBinding } from "../../../src/domain/arqs/bind.js";
import { arqDecider } from "../../../src/domain/arqs/decider.js";
import type { ArqEvent } from "../../../src/domain/arqs/events.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { initialHostState, type HostState } from "../../../src/domain/inventory/state.js";
import { expectDomainError } from "../decider-spec.js";
import { allocate, apply, bdf, fpga, HOST, pci, reported, types } from "../inventory/fixtures.js";
import { ARQ, created, failed, later } from "./fixtures.js";

const RP = rpUuidFor(`${HOST}_${bdf("af")}`);
const target: ArqBinding = { arqUuid: ARQ, hostname: HOST, deviceRpUuid: RP, instanceUuid: "vm-1" };
const arq = (events: ArqEvent[]) => events.reduce(arqDecider.evolve, arqDecider.initialState());
const started: ArqEvent = { type: "ArqBindStarted", data: { ...target, projectId: "p1", at: later } };
const host = (handles = 1): HostState => reported([fpga("af", { handles })]);
const decide = (events: ArqEvent[], h: HostState | null, t = target) => decideBind(arq(events), h, t, later);

describe("decideBind: one decision for the mutation and the binder", () => {
  it("starts and completes a bindable ARQ when the host has a free handle", () => {
    const d = decide([created], host());
    expect(d.arq.map((e) => e.type)).toEqual(["ArqBindStarted", "ArqBound"]);
    expect(types(d.host)).toEqual(["AttachHandleAllocated"]);
    expect(d.arq[1]!.data).toMatchObject({ hostname: HOST, deviceRpUuid: RP, instanceUuid: "vm-1", attachHandleType: "PCI", attachHandleInfo: pci("af") });
    expect(d.arqAfter).toMatchObject({ status: "live", arq: { state: "BOUND" } });
    expect(d.hostAfter!.allocations.get(ARQ)).toMatchObject({ instanceUuid: "vm-1", rpUuid: RP });
  });
  it("only starts without the host's state", () => {
    const d = decide([created], null);
    expect(d.arq.map((e) => e.type)).toEqual(["ArqBindStarted"]);
    expect(d.host).toEqual([]);
  });
  it("only starts when the host refuses a bind that is starting: the binder fails it", () => {
    for (const h of [initialHostState(), apply(host(), allocate(RP, "other"))]) {
      const d = decide([created], h);
      expect(d.arq.map((e) => e.type)).toEqual(["ArqBindStarted"]);
      expect(d.host).toEqual([]);
    }
  });
  it("completes a bind already started, or fails it with the host's reason", () => {
    expect(decide([created, started], host()).arq.map((e) => e.type)).toEqual(["ArqBound"]);
    const full = decide([created, started], apply(host(), allocate(RP, "other")));
    expect(full.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(/No free attach handle/), instanceUuid: "vm-1" } }]);
    const unknown = decide([created, started], initialHostState());
    expect(unknown.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(/No deployable with resource provider/) } }]);
  });
  it("reuses a handle the host already allocated to the ARQ for this target", () => {
    const held = apply(host(2), allocate(RP, ARQ, "vm-1"));
    const d = decide([created, started], held);
    expect(d.host).toEqual([]);
    expect(d.arq[0]!.data).toMatchObject({ attachHandleUuid: held.allocations.get(ARQ)!.handleUuid });
  });
  it("a bind that starts now releases a handle left from an earlier binding and allocates afresh, unless this bind made it", () => {
    const held = apply(host(2), allocate(RP, ARQ, "vm-1"));
    const d = decide([created], held);
    expect(types(d.host)).toEqual(["AttachHandleReleased", "AttachHandleAllocated"]);
    expect(d.arq.map((e) => e.type)).toEqual(["ArqBindStarted", "ArqBound"]);
    expect(d.arq[1]!.data).toMatchObject({ attachHandleUuid: d.hostAfter!.allocations.get(ARQ)!.handleUuid });
    // A leftover for another target is released too, not refused as a handle still held.
    const elsewhere = apply(host(2), allocate(RP, ARQ, "vm-0"));
    expect(types(decide([created], elsewhere).host)).toEqual(["AttachHandleReleased", "AttachHandleAllocated"]);
    const own = decideBind(arq([created]), held, { ...target, allocatedByThisBind: true }, later);
    expect(own.host).toEqual([]);
    expect(own.arq.map((e) => e.type)).toEqual(["ArqBindStarted", "ArqBound"]);
  });
  it("carries the host's state: a second ARQ on the same host gets the next handle", () => {
    const first = decide([created], host(2));
    const second = decideBind(arq([{ ...created, data: { ...created.data, arqUuid: "arq-2" } } as ArqEvent]), first.hostAfter, { ...target, arqUuid: "arq-2" }, later);
    expect(second.arq[1]!.data).toMatchObject({ attachHandleInfo: pci("af", "1") });
  });
  it("is a no-op for a retry: BOUND to the target, or started with no host given", () => {
    const boundAlready = decide([created], host()).arq;
    expect(decide([created, ...boundAlready], host())).toMatchObject({ arq: [], host: [] });
    expect(decide([created, started], null)).toMatchObject({ arq: [], host: [] });
  });
  it("refuses at once a target that does not fit the ARQ's group, and starts nothing", () => {
    const asking = (group: Record<string, string>): ArqEvent => ({ ...created, data: { ...created.data, group } } as ArqEvent);
    const err = expectDomainError(() => decide([asking({ "resources:FPGA": "1", "trait:CUSTOM_NVIDIA_T4": "required" })], host()), "BAD_USER_INPUT", "deviceRpUuid", /lacks required trait CUSTOM_NVIDIA_T4/);
    expect(err.details).toMatchObject({ reason: "TARGET_MISMATCH", missing: ["CUSTOM_NVIDIA_T4"] });
    expectDomainError(() => decide([asking({ "resources:GPU": "1" })], host()), "BAD_USER_INPUT", "deviceRpUuid", /asks for GPU/);
    expectDomainError(() => decide([asking({ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "forbidden" })], host()), "BAD_USER_INPUT", "deviceRpUuid", /forbidden trait CUSTOM_FPGA_INTEL/);
    // A bind already started (the mutation only started it, the binder finishes it) fails with the reason.
    const late = decide([asking({ "resources:GPU": "1" }), started], host());
    expect(late.arq).toMatchObject([{ type: "ArqBindFailed", data: { reason: expect.stringMatching(/does not fit the ARQ's request group/) } }]);
    expect(late.host).toEqual([]);
  });
  it("refuses what the ARQ decider refuses", () => {
    expectDomainError(() => decide([], host()), "NOT_FOUND", "arqUuid");
    expectDomainError(() => decide([created, started, failed()], host()), "CONFLICT", "arqUuid", /Bad state: BIND_FAILED .*failed \(.+\): unbind it first, then bind it again\.$/);
    expectDomainError(() => decide([created, started], host(), { ...target, instanceUuid: "vm-2" }), "CONFLICT", "arqUuid");
  });
});

describe("validateBindings", () => {
  it("names the binding and field of what is missing, and refuses an ARQ twice", () => {
    expect(validateBindings([target])).toEqual([target]);
    expectDomainError(() => validateBindings([target, { ...target, arqUuid: "b", hostname: " " }]), "BAD_USER_INPUT", "bindings[1].hostname", /Fields absent in patch: hostname/);
    expectDomainError(() => validateBindings([{ ...target, deviceRpUuid: "x".repeat(256) }]), "BAD_USER_INPUT", "bindings[0].deviceRpUuid");
    expectDomainError(() => validateBindings([target, target]), "BAD_USER_INPUT", "bindings[1].arqUuid", /appears twice/);
    expectDomainError(() => validateBindings([{ ...target, deviceRpUuid: "x" }]), "BAD_USER_INPUT", "bindings[0].deviceRpUuid", /resource provider's uuid/);
    expectDomainError(() => validateBindings("nope"), "BAD_USER_INPUT", "bindings");
  });
});

describe("checkProvidersCover: a plug gives one provider per group, or one for all", () => {
  const plug = (n: number) => ({ instanceUuid: "vm-1", providers: Array.from({ length: n }, (_, i) => ({ hostname: `h${i}`, deviceRpUuid: RP })) });
  it("takes one provider for any number of groups, and as many providers as groups", () => {
    for (const groups of [1, 2, 3]) expect(() => checkProvidersCover(plug(1), groups)).not.toThrow();
    expect(() => checkProvidersCover(plug(3), 3)).not.toThrow();
  });
  it("refuses fewer providers than groups, and more", () => {
    expectDomainError(() => checkProvidersCover(plug(2), 3), "BAD_USER_INPUT", "providers", /^2 providers given for a request of 3 group\(s\)/);
    expectDomainError(() => checkProvidersCover(plug(3), 2), "BAD_USER_INPUT", "providers", /^3 providers given for a request of 2 group\(s\)/);
  });
});

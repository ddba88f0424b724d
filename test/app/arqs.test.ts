import { describe, expect, it, vi } from "vitest";
import { toNewEvent } from "../../src/app/handle.js";
import { deviceProfileDecider } from "../../src/domain/device-profiles/decider.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { stream } from "../../src/domain/shared/types.js";
import type { NewEvent } from "../../src/infra/eventstore/port.js";
import { expectDomainRejection } from "../domain/decider-spec.js";
import { ADMIN, ctx, fpga, hostState, pci, setup, types } from "./support.js";

const HOST = "compute1";
const RP = rpUuidFor(`${HOST}_0000:af:00.0`);
const agent = { ...ADMIN, principal: "agent:compute1" };
const nova = ctx();
const binder = { principal: "system:binder", correlationId: "b", causationId: "b", at: "2026-03-01T10:02:00.000Z" };
const bindingFor = (arqUuid: string, instanceUuid = "vm-1", deviceRpUuid = RP) => ({ arqUuid, hostname: HOST, deviceRpUuid, instanceUuid });

/** A host with one FPGA of `handles` handles, a profile asking for `count` FPGAs, and its ARQs. */
async function world(handles = 1, count = 1) {
  const w = setup();
  await w.app.reportHostInventory(agent, HOST, [fpga(HOST, "af", handles)]);
  await w.app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": String(count) }] });
  const arqs = await w.app.createArqs(nova, { deviceProfileName: "dp1" });
  return { ...w, arqs, ids: arqs.map((a) => a.uuid) };
}

describe("ARQs (application)", () => {
  describe("create", () => {
    it("makes one ARQ per unit of each group, with group ids, the caller's project, and a record on the profile", async () => {
      const { app, store } = setup();
      const profile = await app.createDeviceProfile(ADMIN, {
        name: "dp1",
        groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_XILINX": "required" }, { "resources:CUSTOM_QAT": "1", "resources:GPU": "1" }],
      });
      const arqs = await app.createArqs(nova, { deviceProfileName: "dp1" });
      expect(arqs.map((a) => [a.deviceProfileGroupId, a.state, a.projectId])).toEqual([
        [0, "INITIAL", "p1"],
        [0, "INITIAL", "p1"],
        [1, "INITIAL", "p1"],
        [1, "INITIAL", "p1"],
      ]);
      expect(arqs[0]).toMatchObject({
        deviceProfileName: "dp1",
        deviceProfileUuid: profile.uuid,
        group: profile.groups[0],
        hostname: null,
        attachHandleType: null,
        attachHandleUuid: null,
        attachHandleInfo: null,
        revision: 0,
        createdAt: nova.at,
        updatedAt: null,
      });
      expect(await types(store, stream.deviceProfile("dp1"))).toEqual(["DeviceProfileCreated", "DeviceProfileArqsCreated"]);
      expect(await app.getArq(arqs[3]!.uuid)).toEqual(arqs[3]);
    });
    it("takes one group with groupIndex; out of range is BAD_USER_INPUT", async () => {
      const { app } = setup();
      await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "2" }] });
      expect((await app.createArqs(nova, { deviceProfileName: "dp1", groupIndex: 1 })).map((a) => a.deviceProfileGroupId)).toEqual([1, 1]);
      await expectDomainRejection(app.createArqs(nova, { deviceProfileName: "dp1", groupIndex: 2 }), "BAD_USER_INPUT", "groupIndex");
    });
    it("answers [] for a profile without resources", async () => {
      const { app, store } = setup();
      await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "trait:CUSTOM_X": "required" }] });
      const before = await store.headPosition();
      expect(await app.createArqs(nova, { deviceProfileName: "dp1" })).toEqual([]);
      expect(await store.headPosition()).toBe(before);
    });
    it("deletes the new ARQs again when the profile is deleted before it records them", async () => {
      const { app, store } = setup();
      const profile = await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "2" }] });
      const appendSequence = store.appendSequence.bind(store);
      // The deletion lands between the creation's decisions and its append.
      const sequences = vi.spyOn(store, "appendSequence").mockImplementationOnce(async (steps) => {
        await store.append(stream.deviceProfile("dp1"), [toNewEvent({ type: "DeviceProfileDeleted", data: { uuid: profile.uuid, name: "dp1", deletedAt: ADMIN.at } }, ADMIN)], "any");
        return appendSequence(steps);
      });
      await expectDomainRejection(app.createArqs(nova, { deviceProfileName: "dp1" }), "NOT_FOUND", "deviceProfileName");
      expect(sequences).toHaveBeenCalledTimes(1);
      const arqStreams = (await store.readAll()).filter((e) => e.stream.startsWith("arq-"));
      expect(arqStreams.map((e) => e.type)).toEqual(["ArqCreated", "ArqCreated", "ArqDeleted", "ArqDeleted"]);
    });
    it("writes the ARQs and the profile's record of them in one sequence, and reads the profile back", async () => {
      const { app, store } = setup();
      await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "2" }] });
      const sequences = vi.spyOn(store, "appendSequence");
      const [a, b] = await Promise.all([app.createArqs(nova, { deviceProfileName: "dp1" }), app.createArqs(nova, { deviceProfileName: "dp1" })]);
      expect(sequences).toHaveBeenCalledTimes(2);
      expect(await types(store, stream.deviceProfile("dp1"))).toEqual(["DeviceProfileCreated", "DeviceProfileArqsCreated", "DeviceProfileArqsCreated"]);
      // Both records took, whichever landed first: the profile knows all four ARQs.
      const events = await store.readStream(stream.deviceProfile("dp1"));
      const state = events.reduce((st, e) => deviceProfileDecider.evolve(st, e as never), deviceProfileDecider.initialState());
      expect(state.status === "active" && [...a!, ...b!].every((arq) => state.liveArqs.has(arq.uuid))).toBe(true);
    });
    it("refuses an unknown, empty or deleted profile with NOT_FOUND", async () => {
      const { app } = setup();
      await expectDomainRejection(app.createArqs(nova, { deviceProfileName: "nope" }), "NOT_FOUND", "deviceProfileName", "Device Profile not found with name=nope");
      await expectDomainRejection(app.createArqs(nova, { deviceProfileName: "" }), "NOT_FOUND", "deviceProfileName");
      await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
      await app.deleteDeviceProfiles(ADMIN, { names: ["dp1"] });
      await expectDomainRejection(app.createArqs(nova, { deviceProfileName: "dp1" }), "NOT_FOUND", "deviceProfileName");
    });
  });

  describe("bind", () => {
    it("starts binds, then the binder's allocation makes them BOUND with the attach handle", async () => {
      const { app, ids } = await world(2, 2);
      const started = await app.startBinds(nova, ids.map((id) => bindingFor(id)));
      expect(started.map((a) => [a.state, a.hostname, a.deviceRpUuid, a.instanceUuid])).toEqual([
        ["BIND_STARTED", HOST, RP, "vm-1"],
        ["BIND_STARTED", HOST, RP, "vm-1"],
      ]);
      expect(started[0]!.attachHandleUuid).toBeNull();
      const r = await app.allocateForArq(binder, ids[0]!);
      expect(r).toMatchObject({ ok: true, arq: { state: "BOUND", attachHandleType: "PCI", attachHandleInfo: pci("af", "0") } });
      const r2 = await app.allocateForArq(binder, ids[1]!);
      expect(r2.ok && r2.arq.attachHandleInfo).toEqual(pci("af", "1"));
      expect((await app.getArq(ids[0]!))?.attachHandleUuid).toBe(r.ok ? r.arq.attachHandleUuid : "x");
    });
    it("a retried bind returns the ARQs as they are; allocation is idempotent", async () => {
      const { app, ids, store } = await world();
      await app.startBinds(nova, [bindingFor(ids[0]!)]);
      const again = await app.startBinds(nova, [bindingFor(ids[0]!)]);
      expect(again[0]!.state).toBe("BIND_STARTED");
      await app.allocateForArq(binder, ids[0]!);
      expect((await app.startBinds(nova, [bindingFor(ids[0]!)]))[0]!.state).toBe("BOUND");
      expect(await app.allocateForArq(binder, ids[0]!)).toEqual({ ok: false, reason: "not binding (state BOUND)", notBinding: true });
      expect((await types(store, stream.host(HOST))).filter((t) => t === "AttachHandleAllocated")).toHaveLength(1);
    });
    it("validates every binding before touching anything", async () => {
      const { app, ids, store } = await world(1, 2);
      const head = await store.headPosition();
      await expectDomainRejection(app.startBinds(nova, [bindingFor(ids[0]!), { ...bindingFor(ids[1]!), hostname: "" }]), "BAD_USER_INPUT", "bindings[1].hostname");
      await expectDomainRejection(app.startBinds(nova, [bindingFor(ids[0]!), bindingFor(ids[0]!)]), "BAD_USER_INPUT", "bindings[1].arqUuid");
      await expectDomainRejection(app.startBinds(nova, [bindingFor(ids[0]!), bindingFor("missing")]), "NOT_FOUND", "bindings[1].arqUuid");
      await expectDomainRejection(app.startBinds(ctx({ projectId: "p2" }), [bindingFor(ids[0]!)]), "NOT_FOUND", "bindings[0].arqUuid");
      expect(await store.headPosition()).toBe(head);
      expect((await app.startBinds({ ...nova, projectId: null, isAdmin: true }, [bindingFor(ids[0]!)]))[0]!.state).toBe("BIND_STARTED");
    });
    it("refuses an ARQ in a state that cannot bind (CONFLICT)", async () => {
      const { app, ids } = await world();
      await app.startBinds(nova, [bindingFor(ids[0]!)]);
      await app.failBind(binder, ids[0]!, "timeout");
      await expectDomainRejection(app.startBinds(nova, [bindingFor(ids[0]!, "vm-2")]), "CONFLICT", "bindings[0].arqUuid", /Bad state: BIND_FAILED/);
    });
    it("binds an instance once: more ARQs for it are refused with Cyborg's message", async () => {
      const { app, ids } = await world(2, 2);
      await app.startBinds(nova, [bindingFor(ids[0]!)]);
      await expectDomainRejection(app.startBinds(nova, [bindingFor(ids[1]!)]), "CONFLICT", "instanceUuid", "Instance vm-1 already has accelerator requests. Cannot bind additional ARQs.");
      expect((await app.getArq(ids[1]!))!.state).toBe("INITIAL");
    });
    it("a refused instance leaves nothing of the call: the other instances of the call are not recorded", async () => {
      const { app, ids, store } = await world(3, 3);
      await app.startBinds(nova, [bindingFor(ids[0]!, "vm-2")]);
      const head = await store.headPosition();
      await expectDomainRejection(app.startBinds(nova, [bindingFor(ids[1]!, "vm-1"), bindingFor(ids[2]!, "vm-2")]), "CONFLICT", "instanceUuid");
      expect(await types(store, stream.instance("vm-1"))).toEqual([]);
      expect(await store.headPosition()).toBe(head);
      expect((await app.startBinds(nova, [bindingFor(ids[1]!, "vm-1")]))[0]!.state).toBe("BIND_STARTED");
    });
    it("an ARQ deleted while its bind starts undoes the other starts and the instance's record", async () => {
      const { app, ids, store } = await world(2, 2);
      const append = store.append.bind(store);
      const appendSequence = store.appendSequence.bind(store);
      // The ARQ is deleted just before its bind start is written, whichever way that is written.
      const deleteFirst = async (s: string, events: readonly NewEvent[]) => {
        if (s === stream.arq(ids[1]!) && events[0]?.type === "ArqBindStarted") {
          const gone = { arqUuid: ids[1]!, deviceProfileName: "dp1", deviceProfileUuid: "x", previousHostname: null, previousInstanceUuid: null, releasedHandleUuid: null, at: ADMIN.at };
          await append(s, [toNewEvent({ type: "ArqDeleted", data: gone }, ADMIN)], "any");
        }
      };
      vi.spyOn(store, "append").mockImplementation(async (s, events, rev) => {
        await deleteFirst(s, events);
        return append(s, events, rev);
      });
      const sequences = vi.spyOn(store, "appendSequence").mockImplementation(async (steps) => {
        for (const step of steps) await deleteFirst(step.stream, step.events);
        return appendSequence(steps);
      });
      await expectDomainRejection(app.startBinds(nova, ids.map((id) => bindingFor(id))), "NOT_FOUND", "bindings[1].arqUuid");
      expect(sequences).toHaveBeenCalledTimes(1);
      expect((await app.getArq(ids[0]!))!.state).toBe("UNBOUND");
      expect(await types(store, stream.instance("vm-1"))).toEqual(["InstanceArqsBound", "InstanceArqsReleased"]);
    });
    it("concurrent binds racing for the last handle leave exactly one winner", async () => {
      const { app, ids, store } = await world(1, 4);
      await app.startBinds(nova, ids.map((id, i) => bindingFor(id, `vm-${i}`)));
      const results = await Promise.all(ids.map((id) => app.allocateForArq(binder, id)));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      for (const r of results.filter((x) => !x.ok)) expect(r).toMatchObject({ ok: false, reason: expect.stringMatching(/No free attach handle/) });
      const states = await Promise.all(ids.map(async (id) => (await app.getArq(id))!.state));
      expect(states.sort()).toEqual(["BIND_FAILED", "BIND_FAILED", "BIND_FAILED", "BOUND"]);
      expect((await hostState(store, HOST)).allocations.size).toBe(1);
      const failed = (await Promise.all(ids.map((id) => app.getArq(id)))).find((a) => a!.state === "BIND_FAILED")!;
      expect(failed.bindFailureReason).toMatch(/No free attach handle/);
    });
    it("concurrent binds on one host with handles to spare all succeed, each with its own handle", async () => {
      const { app, ids, store } = await world(4, 4);
      await app.startBinds(nova, ids.map((id, i) => bindingFor(id, `vm-${i}`)));
      const results = await Promise.all(ids.map((id) => app.allocateForArq(binder, id)));
      expect(results.every((r) => r.ok)).toBe(true);
      const handles = results.map((r) => (r.ok ? r.arq.attachHandleUuid : null));
      expect(new Set(handles).size).toBe(4);
      expect((await hostState(store, HOST)).allocations.size).toBe(4);
    });
    it("an ARQ unbound between the allocation's decision and its append keeps no handle", async () => {
      const { app, ids, store } = await world(2, 1);
      await app.startBinds(nova, [bindingFor(ids[0]!)]);
      const appendSequence = store.appendSequence.bind(store);
      vi.spyOn(store, "appendSequence").mockImplementationOnce(async (steps) => {
        const unbound = { arqUuid: ids[0]!, previousHostname: HOST, previousInstanceUuid: "vm-1", releasedHandleUuid: null, at: ADMIN.at };
        await store.append(stream.arq(ids[0]!), [toNewEvent({ type: "ArqUnbound", data: unbound }, ADMIN)], "any");
        return appendSequence(steps);
      });
      expect(await app.allocateForArq(binder, ids[0]!)).toEqual({ ok: false, reason: "not binding (state UNBOUND)", notBinding: true });
      expect((await hostState(store, HOST)).allocations.size).toBe(0);
      expect(await types(store, stream.host(HOST))).toEqual(expect.arrayContaining(["AttachHandleAllocated", "AttachHandleReleased"]));
      expect((await app.getArq(ids[0]!))!.state).toBe("UNBOUND");
    });
    it("with allocate, ARQs whose handle is free are bound in the call itself, in one commit", async () => {
      const { app, ids, store } = await world(2, 2);
      const sequences = vi.spyOn(store, "appendSequence");
      const appends = vi.spyOn(store, "append");
      const views = await app.startBinds(nova, ids.map((id) => bindingFor(id)), { allocate: true });
      expect(views.map((v) => v.state)).toEqual(["BOUND", "BOUND"]);
      expect(new Set(views.map((v) => v.attachHandleUuid)).size).toBe(2);
      expect(sequences).toHaveBeenCalledTimes(1);
      expect(appends).not.toHaveBeenCalled();
      expect(await types(store, stream.arq(ids[0]!))).toEqual(["ArqCreated", "ArqBindStarted", "ArqBound"]);
      expect((await hostState(store, HOST)).allocations.size).toBe(2);
      expect(await app.allocateForArq(binder, ids[0]!)).toEqual({ ok: false, reason: "not binding (state BOUND)", notBinding: true });
    });
    it("with allocate, an ARQ with no free handle is only started, and the binder fails it with the reason", async () => {
      const { app, ids } = await world(1, 2);
      const views = await app.startBinds(nova, ids.map((id) => bindingFor(id)), { allocate: true });
      expect(views.map((v) => v.state)).toEqual(["BOUND", "BIND_STARTED"]);
      expect(await app.allocateForArq(binder, ids[1]!)).toMatchObject({ ok: false, reason: expect.stringMatching(/No free attach handle/) });
      expect((await app.getArq(ids[1]!))!.state).toBe("BIND_FAILED");
    });
    it("with allocate, an ARQ that changed between the decision and the append is decided again, reusing the handle allocated for it", async () => {
      const { app, ids, store } = await world(2, 1);
      const appendSequence = store.appendSequence.bind(store);
      vi.spyOn(store, "appendSequence").mockImplementationOnce(async (steps) => {
        // Another writer touches the ARQ between the decision and the append (it stays bindable).
        const unbound = { arqUuid: ids[0]!, previousHostname: null, previousInstanceUuid: null, releasedHandleUuid: null, at: ADMIN.at };
        await store.append(stream.arq(ids[0]!), [toNewEvent({ type: "ArqUnbound", data: unbound }, ADMIN)], "any");
        return appendSequence(steps);
      });
      const [view] = await app.startBinds(nova, [bindingFor(ids[0]!)], { allocate: true });
      expect(view!.state).toBe("BOUND");
      const host = await hostState(store, HOST);
      expect(host.allocations.size).toBe(1);
      expect(view!.attachHandleUuid).toBe(host.allocations.get(ids[0]!)!.handleUuid);
      expect((await types(store, stream.host(HOST))).filter((t) => t.startsWith("AttachHandle") && t !== "AttachHandleAdded")).toEqual(["AttachHandleAllocated"]);
      expect(await app.allocateForArq(binder, ids[0]!)).toEqual({ ok: false, reason: "not binding (state BOUND)", notBinding: true });
    });
    it("an unknown RP or a device in maintenance fails the bind with the reason", async () => {
      const { app, ids, store } = await world(2, 2);
      const unknownRp = rpUuidFor("compute1_nowhere");
      await app.startBinds(nova, [bindingFor(ids[0]!, "vm-1", unknownRp)]);
      expect(await app.allocateForArq(binder, ids[0]!)).toMatchObject({ ok: false, reason: expect.stringContaining(`No deployable with resource provider ${unknownRp}`) });
      expect((await app.getArq(ids[0]!))!.state).toBe("BIND_FAILED");
      const device = [...(await hostState(store, HOST)).devices.keys()][0]!;
      await app.setDeviceStatus(ADMIN, HOST, device, "MAINTAINING");
      await app.startBinds(nova, [bindingFor(ids[1]!, "vm-2")]);
      expect(await app.allocateForArq(binder, ids[1]!)).toMatchObject({ ok: false, reason: expect.stringMatching(/maintenance/) });
    });
    it("refuses a target that does not fit the ARQ's group before writing anything; the binder fails one it only started", async () => {
      const w = setup();
      await w.app.reportHostInventory(agent, HOST, [fpga(HOST, "af", 2)]);
      await w.app.createDeviceProfile(ADMIN, { name: "t4", groups: [{ "resources:FPGA": "2", "trait:CUSTOM_NVIDIA_T4": "required" }] });
      const ids = (await w.app.createArqs(nova, { deviceProfileName: "t4" })).map((a) => a.uuid);
      const head = await w.store.headPosition();
      const err = await expectDomainRejection(w.app.startBinds(nova, [bindingFor(ids[0]!)], { allocate: true }), "BAD_USER_INPUT", "bindings[0].deviceRpUuid", /lacks required trait CUSTOM_NVIDIA_T4/);
      expect(err).toMatchObject({ details: { reason: "TARGET_MISMATCH", deviceRpUuid: RP, missing: ["CUSTOM_NVIDIA_T4"] } });
      expect(await w.store.headPosition()).toEqual(head);
      expect((await w.app.getArq(ids[0]!))!.state).toBe("INITIAL");
      // Started without the host's state (no inline allocation): the binder's step refuses it with the same reason.
      await w.app.startBinds(nova, [bindingFor(ids[1]!, "vm-2")]);
      expect(await w.app.allocateForArq(binder, ids[1]!)).toMatchObject({ ok: false, reason: expect.stringMatching(/lacks required trait CUSTOM_NVIDIA_T4/) });
      expect((await w.app.getArq(ids[1]!))!.state).toBe("BIND_FAILED");
      expect((await hostState(w.store, HOST)).allocations.size).toBe(0);
    });
    it("allocateForArq on an ARQ that is not binding does nothing", async () => {
      const { app, ids, store } = await world();
      const head = await store.headPosition();
      expect(await app.allocateForArq(binder, ids[0]!)).toEqual({ ok: false, reason: "not binding (state INITIAL)", notBinding: true });
      expect(await app.allocateForArq(binder, "missing")).toEqual({ ok: false, reason: "not binding (no such ARQ)", notBinding: true });
      expect(await store.headPosition()).toBe(head);
    });
    it("failBind fails a BIND_STARTED ARQ once; a BOUND one only when asked (a lost device)", async () => {
      const { app, ids } = await world(2, 2);
      await app.startBinds(nova, [bindingFor(ids[0]!), bindingFor(ids[1]!)]);
      expect(await app.failBind(binder, ids[0]!, "timeout")).toBe(true);
      expect(await app.failBind(binder, ids[0]!, "timeout")).toBe(false);
      expect((await app.getArq(ids[0]!))!.bindFailureReason).toBe("timeout");
      await app.allocateForArq(binder, ids[1]!);
      expect(await app.failBind(binder, ids[1]!, "x")).toBe(false);
      expect(await app.failBind(binder, ids[1]!, "device lost", { fromBound: true })).toBe(true);
      expect(await app.failBind(binder, "missing", "x")).toBe(false);
    });
    it("never leaks a handle when an unbind races the allocation", async () => {
      for (let round = 0; round < 20; round++) {
        const { app, ids, store } = await world(1, 1);
        await app.startBinds(nova, [bindingFor(ids[0]!)]);
        await Promise.all([app.allocateForArq(binder, ids[0]!), app.unbindArqs(nova, [ids[0]!])]);
        const arq = (await app.getArq(ids[0]!))!;
        const held = (await hostState(store, HOST)).allocations.size;
        expect([arq.state, held]).toSatisfy(([state, n]: [string, number]) => (state === "UNBOUND" && n === 0) || (state === "BOUND" && n === 1));
        if (arq.state === "BOUND") await app.unbindArqs(nova, [ids[0]!]);
        expect((await hostState(store, HOST)).allocations.size).toBe(0);
      }
    });
  });

  describe("unbind", () => {
    it("releases the handle and the instance, so the ARQ and the instance can bind again", async () => {
      const { app, ids, store } = await world(1, 1);
      await app.startBinds(nova, [bindingFor(ids[0]!)]);
      await app.allocateForArq(binder, ids[0]!);
      const [view] = await app.unbindArqs(nova, [ids[0]!]);
      expect(view).toMatchObject({ state: "UNBOUND", hostname: null, instanceUuid: null, attachHandleUuid: null, projectId: "p1" });
      expect((await hostState(store, HOST)).allocations.size).toBe(0);
      expect(await types(store, stream.instance("vm-1"))).toEqual(["InstanceArqsBound", "InstanceArqsReleased"]);
      await app.startBinds(nova, [bindingFor(ids[0]!, "vm-1")]);
      expect((await app.allocateForArq(binder, ids[0]!)).ok).toBe(true);
    });
    it("unbinding an INITIAL ARQ changes nothing; a missing one is NOT_FOUND and nothing is unbound", async () => {
      const { app, ids, store } = await world(1, 2);
      await app.startBinds(nova, [bindingFor(ids[1]!)]);
      const head = await store.headPosition();
      expect((await app.unbindArqs(nova, [ids[0]!]))[0]!.state).toBe("INITIAL");
      await expectDomainRejection(app.unbindArqs(nova, [ids[1]!, "missing"]), "NOT_FOUND", "arqUuids[1]");
      expect(await store.headPosition()).toBe(head);
    });
  });

  describe("delete", () => {
    it("needs exactly one of arqUuids and instanceUuid", async () => {
      const { app } = setup();
      await expectDomainRejection(app.deleteArqs(nova, {}), "BAD_USER_INPUT", "arqUuids");
      await expectDomainRejection(app.deleteArqs(nova, { arqUuids: ["a"], instanceUuid: "vm-1" }), "BAD_USER_INPUT", "arqUuids");
    });
    it("by uuids: all must exist and be visible, else NOT_FOUND and nothing is deleted", async () => {
      const { app, ids } = await world(1, 2);
      await expectDomainRejection(app.deleteArqs(nova, { arqUuids: [ids[0]!, "missing"] }), "NOT_FOUND", "arqUuids[1]");
      await expectDomainRejection(app.deleteArqs(ctx({ projectId: "p2" }), { arqUuids: [ids[0]!] }), "NOT_FOUND", "arqUuids[0]");
      expect(await app.getArq(ids[0]!)).not.toBeNull();
      expect(await app.deleteArqs(nova, { arqUuids: ids })).toEqual(ids);
      expect(await app.getArq(ids[0]!)).toBeNull();
      await expectDomainRejection(app.deleteArqs(nova, { arqUuids: [ids[0]!] }), "NOT_FOUND", "arqUuids[0]");
    });
    it("by instance: deletes every ARQ of the instance, releases handles, instance and profile; idempotent", async () => {
      const { app, ids, store } = await world(3, 3);
      await app.startBinds(nova, ids.map((id) => bindingFor(id, "vm-1")));
      await app.allocateForArq(binder, ids[0]!);
      await app.allocateForArq(binder, ids[1]!);
      await app.failBind(binder, ids[2]!, "timeout");
      expect((await app.deleteArqs(ADMIN, { instanceUuid: "vm-1" })).sort()).toEqual([...ids].sort());
      for (const id of ids) expect(await app.getArq(id)).toBeNull();
      expect((await hostState(store, HOST)).allocations.size).toBe(0);
      expect(await types(store, stream.instance("vm-1"))).toEqual(["InstanceArqsBound", "InstanceArqsReleased"]);
      expect(await app.deleteArqs(ADMIN, { instanceUuid: "vm-1" })).toEqual([]);
      expect(await app.deleteArqs(ADMIN, { instanceUuid: "never-bound" })).toEqual([]);
      expect(await app.deleteDeviceProfiles(ADMIN, { names: ["dp1"] })).toHaveLength(1);
    });
    it("by instance: only the caller's visible ARQs", async () => {
      const { app, ids } = await world(1, 1);
      await app.startBinds(nova, [bindingFor(ids[0]!)]);
      expect(await app.deleteArqs(ctx({ projectId: "p2" }), { instanceUuid: "vm-1" })).toEqual([]);
      expect(await app.deleteArqs(nova, { instanceUuid: "vm-1" })).toEqual(ids);
    });
  });

  describe("a device lost while bound (Cyborg bug 5.5 fixed)", () => {
    it("is kept while its ARQ is bound and removed once the ARQ is deleted", async () => {
      const { app, ids, store } = await world(1, 1);
      await app.startBinds(nova, [bindingFor(ids[0]!)]);
      await app.allocateForArq(binder, ids[0]!);
      const gone = await app.reportHostInventory(agent, HOST, []);
      expect(gone).toMatchObject({ removed: 1 });
      const lost = (await store.readStream(stream.host(HOST))).find((e) => e.type === "DeviceLost")!;
      expect(lost.data).toMatchObject({ arqUuids: ids });
      expect(await app.failBind(binder, ids[0]!, "device lost", { fromBound: true })).toBe(true);
      expect((await hostState(store, HOST)).devices.size).toBe(1);
      await app.deleteArqs(nova, { instanceUuid: "vm-1" });
      expect((await hostState(store, HOST)).devices.size).toBe(0);
      expect((await types(store, stream.host(HOST))).slice(-2)).toEqual(["DeployableRemoved", "DeviceRemoved"]);
    });
  });

  it("releaseHandleForArq is idempotent and harmless on unknown hosts", async () => {
    const { app, ids, store } = await world(1, 1);
    await app.startBinds(nova, [bindingFor(ids[0]!)]);
    await app.allocateForArq(binder, ids[0]!);
    await app.releaseHandleForArq(binder, HOST, ids[0]!);
    await app.releaseHandleForArq(binder, HOST, ids[0]!);
    await app.releaseHandleForArq(binder, "nowhere", ids[0]!);
    expect((await types(store, stream.host(HOST))).filter((t) => t === "AttachHandleReleased")).toHaveLength(1);
    expect(await store.readStream(stream.host("nowhere"))).toEqual([]);
  });
});

import { describe, expect, it, vi } from "vitest";
import { Application } from "../../src/app/application.js";
import { toNewEvent } from "../../src/app/handle.js";
import { stream } from "../../src/domain/shared/types.js";
import { expectDomainRejection } from "../domain/decider-spec.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { ADMIN, ctx, deferred, setup, types, until } from "./support.js";

const U1 = "11111111-1111-4111-8111-111111111111";
const groups = [{ "resources:FPGA": "1" }, { "resources:CUSTOM_QAT": 2, "trait: custom_qat": "required" }];

describe("device profiles (application)", () => {
  it("creates a profile and reads it back from the log", async () => {
    const { app, store } = setup();
    const view = await app.createDeviceProfile(ADMIN, { name: "dp1", description: "d", groups });
    expect(view).toEqual({
      uuid: "00000000-0000-4000-8000-000000000001",
      name: "dp1",
      description: "d",
      groups: [{ "resources:FPGA": "1" }, { "resources:CUSTOM_QAT": "2", "trait:CUSTOM_QAT": "required" }],
      createdAt: ADMIN.at,
      updatedAt: null,
      version: 1,
      enabled: true,
      inline: false,
    });
    expect(await app.getDeviceProfileFromLog("dp1")).toEqual(view);
    expect(await app.getDeviceProfileFromLog("nope")).toBeNull();
    expect(await types(store, stream.deviceProfileUuid(view.uuid))).toEqual(["DeviceProfileUuidClaimed", "DeviceProfileUuidClaimed"]);
    expect((await store.readStream(stream.deviceProfile("dp1")))[0]!.metadata).toMatchObject({ principal: "admin", correlationId: "corr-1" });
  });
  it("refuses bad input with BAD_USER_INPUT and writes nothing", async () => {
    const { app, store } = setup();
    await expectDomainRejection(app.createDeviceProfile(ADMIN, { name: undefined, groups }), "BAD_USER_INPUT", "name");
    await expectDomainRejection(app.createDeviceProfile(ADMIN, { name: "dp1", groups: [] }), "BAD_USER_INPUT", "groups");
    await expectDomainRejection(app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "accel:nope": "1" }] }), "BAD_USER_INPUT", "groups[0].accel:nope");
    expect(await store.headPosition()).toBeUndefined();
  });
  it("refuses a duplicate name with CONFLICT, leaving the uuid free", async () => {
    const { app } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups });
    await expectDomainRejection(app.createDeviceProfile(ADMIN, { name: "dp1", groups, uuid: U1 }), "CONFLICT", "name", "A device_profile with name dp1 already exists.");
    expect((await app.createDeviceProfile(ADMIN, { name: "dp2", groups, uuid: U1 })).uuid).toBe(U1);
  });
  it("refuses a uuid held by a live profile of another name with CONFLICT (Cyborg: 500)", async () => {
    const { app } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups, uuid: U1 });
    await expectDomainRejection(app.createDeviceProfile(ADMIN, { name: "dp2", groups, uuid: U1.toUpperCase() }), "CONFLICT", "uuid", /already exists \(dp1\)/);
    expect(await app.getDeviceProfileFromLog("dp2")).toBeNull();
  });
  it("re-claims the uuid of a deleted profile, and re-creates a deleted name", async () => {
    const { app } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups, uuid: U1 });
    expect(await app.deleteDeviceProfiles(ADMIN, { names: ["dp1"] })).toEqual([U1]);
    expect((await app.createDeviceProfile(ADMIN, { name: "dp2", groups, uuid: U1 })).name).toBe("dp2");
    const again = await app.createDeviceProfile(ADMIN, { name: "dp1", groups });
    expect(again.uuid).not.toBe(U1);
  });
  it("re-claims a uuid left behind by a failed creation", async () => {
    const { app, store } = setup();
    await store.append(stream.deviceProfileUuid(U1), [toNewEvent({ type: "DeviceProfileUuidClaimed", data: { uuid: U1, name: "crashed" } }, ADMIN)], "no_stream");
    expect((await app.createDeviceProfile(ADMIN, { name: "dp1", groups, uuid: U1 })).uuid).toBe(U1);
    expect(await types(store, stream.deviceProfileUuid(U1))).toEqual([
      "DeviceProfileUuidClaimed",
      "DeviceProfileUuidReleased",
      "DeviceProfileUuidClaimed",
      "DeviceProfileUuidClaimed",
    ]);
  });
  it("concurrent creations with one uuid and different names: exactly one wins", async () => {
    for (let round = 0; round < 10; round++) {
      const { app } = setup();
      const results = await Promise.allSettled(["a", "b", "c", "d"].map((name) => app.createDeviceProfile(ADMIN, { name, groups, uuid: U1 })));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "CONFLICT" });
      const live = await Promise.all(["a", "b", "c", "d"].map((n) => app.getDeviceProfileFromLog(n)));
      expect(live.filter((p) => p !== null)).toHaveLength(1);
    }
  });
  it("a takeover of a claim judged stale while its creation was still running: the late creation gives way", async () => {
    const { app, store } = setup();
    // Hold A's profile append until B has taken the uuid over and created its profile.
    const gate = deferred();
    const append = store.append.bind(store);
    vi.spyOn(store, "append").mockImplementation(async (s, events, rev) => {
      if (s === stream.deviceProfile("a")) await gate.promise;
      return append(s, events, rev);
    });
    const a = app.createDeviceProfile(ADMIN, { name: "a", groups, uuid: U1 });
    await until(async () => (await store.readStream(stream.deviceProfileUuid(U1))).length === 1);
    await app.createDeviceProfile(ADMIN, { name: "b", groups, uuid: U1 });
    gate.resolve();
    await expectDomainRejection(a, "CONFLICT", "uuid");
    expect(await app.getDeviceProfileFromLog("a")).toBeNull();
    expect((await app.getDeviceProfileFromLog("b"))?.uuid).toBe(U1);
    expect(await types(store, stream.deviceProfile("a"))).toEqual(["DeviceProfileCreated", "DeviceProfileDeleted"]);
  });
  it("a takeover decided on a stale read fails once the holder confirmed its claim", async () => {
    // B runs in another process (in one process, writers of a stream wait for each other).
    const { app, store, newId } = setup();
    const other = new Application({ store, newId });
    // Hold B's takeover (Released + Claimed) until A has created and confirmed.
    const gate = deferred();
    const append = store.append.bind(store);
    vi.spyOn(store, "append").mockImplementation(async (s, events, rev) => {
      if (s === stream.deviceProfileUuid(U1) && events[0]?.type === "DeviceProfileUuidReleased") await gate.promise;
      return append(s, events, rev);
    });
    const gateA = deferred();
    const loadHold = vi.spyOn(store, "readStream");
    loadHold.mockImplementation(async (s, o) => {
      if (s === stream.deviceProfile("a") && !gate.settled) gateA.resolve();
      return MemoryEventStore.prototype.readStream.call(store, s, o);
    });
    await store.append(stream.deviceProfileUuid(U1), [toNewEvent({ type: "DeviceProfileUuidClaimed", data: { uuid: U1, name: "a" } }, ADMIN)], "no_stream");
    const b = other.createDeviceProfile(ADMIN, { name: "b", groups, uuid: U1 });
    await gateA.promise; // B has read profile a (absent) and judged the claim stale
    await app.createDeviceProfile(ADMIN, { name: "a", groups, uuid: U1 });
    gate.resolve();
    await expectDomainRejection(b, "CONFLICT", "uuid", /already exists \(a\)/);
    expect((await app.getDeviceProfileFromLog("a"))?.uuid).toBe(U1);
    expect(await app.getDeviceProfileFromLog("b")).toBeNull();
  });
  it("concurrent creations of one name: exactly one wins", async () => {
    const { app } = setup();
    const results = await Promise.allSettled([1, 2, 3].map(() => app.createDeviceProfile(ADMIN, { name: "dp1", groups })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  describe("delete", () => {
    it("deletes by names and by uuids, returning the uuids", async () => {
      const { app } = setup();
      const a = await app.createDeviceProfile(ADMIN, { name: "a", groups });
      const b = await app.createDeviceProfile(ADMIN, { name: "b", groups });
      const c = await app.createDeviceProfile(ADMIN, { name: "c", groups });
      expect(await app.deleteDeviceProfiles(ADMIN, { names: ["a"], uuids: [b.uuid, a.uuid] })).toEqual([a.uuid, b.uuid]);
      expect(await app.getDeviceProfileFromLog("a")).toBeNull();
      expect(await app.getDeviceProfileFromLog("c")).toEqual(c);
    });
    it("is all or nothing: one missing name or uuid is NOT_FOUND and nothing is deleted", async () => {
      const { app } = setup();
      await app.createDeviceProfile(ADMIN, { name: "a", groups });
      await expectDomainRejection(app.deleteDeviceProfiles(ADMIN, { names: ["a", "missing"] }), "NOT_FOUND", "names[1]");
      await expectDomainRejection(app.deleteDeviceProfiles(ADMIN, { names: ["a"], uuids: [U1] }), "NOT_FOUND", "uuids[0]");
      expect(await app.getDeviceProfileFromLog("a")).not.toBeNull();
    });
    it("refuses an empty selection, an empty name or a malformed uuid", async () => {
      const { app } = setup();
      await expectDomainRejection(app.deleteDeviceProfiles(ADMIN, {}), "BAD_USER_INPUT", "names");
      await expectDomainRejection(app.deleteDeviceProfiles(ADMIN, { names: [""] }), "BAD_USER_INPUT", "names[0]");
      await expectDomainRejection(app.deleteDeviceProfiles(ADMIN, { uuids: ["x"] }), "BAD_USER_INPUT", "uuids[0]");
    });
    it("refuses a profile that live ARQs use (CONFLICT naming how many), and deletes once they are gone", async () => {
      const { app } = setup();
      await app.createDeviceProfile(ADMIN, { name: "dp1", groups });
      await app.createDeviceProfile(ADMIN, { name: "free", groups });
      const arqs = await app.createArqs(ctx(), { deviceProfileName: "dp1" });
      expect(arqs).toHaveLength(3);
      const err = await expectDomainRejection(app.deleteDeviceProfiles(ADMIN, { names: ["free", "dp1"] }), "CONFLICT", "names", /used by 3 accelerator requests/);
      expect(err.details).toEqual({ name: "dp1", arqCount: 3 });
      expect(await app.getDeviceProfileFromLog("free")).not.toBeNull();
      await app.deleteArqs(ctx(), { arqUuids: arqs.slice(0, 2).map((a) => a.uuid) });
      await expectDomainRejection(app.deleteDeviceProfiles(ADMIN, { names: ["dp1"] }), "CONFLICT", "names", /used by 1 accelerator request;/);
      await app.deleteArqs(ctx(), { arqUuids: [arqs[2]!.uuid] });
      expect(await app.deleteDeviceProfiles(ADMIN, { names: ["dp1"] })).toHaveLength(1);
    });
    it("heals a profile whose ARQ was deleted without the profile hearing of it", async () => {
      const { app, store } = setup();
      await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
      const [arq] = await app.createArqs(ctx(), { deviceProfileName: "dp1" });
      // A delete that stopped after the ARQ stream (a crash before the profile's record).
      const deleted = { arqUuid: arq!.uuid, deviceProfileName: "dp1", deviceProfileUuid: arq!.deviceProfileUuid, previousHostname: null, previousInstanceUuid: null, releasedHandleUuid: null, at: ADMIN.at };
      await store.append(stream.arq(arq!.uuid), [toNewEvent({ type: "ArqDeleted", data: deleted }, ADMIN)], 0);
      expect(await app.deleteDeviceProfiles(ADMIN, { names: ["dp1"] })).toEqual([arq!.deviceProfileUuid]);
      expect(await types(store, stream.deviceProfile("dp1"))).toEqual(["DeviceProfileCreated", "DeviceProfileArqsCreated", "DeviceProfileArqsDeleted", "DeviceProfileDeleted"]);
    });
  });
});

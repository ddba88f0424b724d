import { describe, expect, it } from "vitest";
import { inlineProfileName } from "../../src/domain/device-profiles/inline.js";
import { stream } from "../../src/domain/shared/types.js";
import { expectDomainRejection } from "../domain/decider-spec.js";
import { ADMIN, ctx, setup, types } from "./support.js";

const nova = ctx();
const v1 = [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required" }];
const v2 = [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL_ARRIA10": "required" }];

describe("device profile lifecycle (application)", () => {
  it("an update is a new version; ARQs keep the version and group they were made from", async () => {
    const { app } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: v1 });
    const [old] = await app.createArqs(nova, { deviceProfileName: "dp1" });
    const updated = await app.updateDeviceProfile(ADMIN, { name: "dp1", groups: v2, description: "now Arria 10" });
    expect(updated).toMatchObject({ version: 2, groups: v2, description: "now Arria 10", updatedAt: ADMIN.at });
    const [fresh] = await app.createArqs(nova, { deviceProfileName: "dp1" });
    expect(old).toMatchObject({ deviceProfileVersion: 1, group: v1[0] });
    expect(fresh).toMatchObject({ deviceProfileVersion: 2, group: v2[0] });
    expect(await app.getArq(old!.uuid)).toMatchObject({ deviceProfileVersion: 1, group: v1[0] });
    await expectDomainRejection(app.updateDeviceProfile(ADMIN, { name: "dp1", groups: [{ "trait:CUSTOM_X": "maybe" }] }), "BAD_USER_INPUT", "groups[0].trait:CUSTOM_X");
    await expectDomainRejection(app.updateDeviceProfile(ADMIN, { name: "dp1", groups: v1, expectedVersion: 1 }), "CONFLICT", "expectedVersion");
    await expectDomainRejection(app.updateDeviceProfile(ADMIN, { name: "nope", groups: v1 }), "NOT_FOUND", "name");
  });

  it("a disabled profile refuses new ARQs and writes nothing; its ARQs are still deleted; enabled, it makes them again", async () => {
    const { app, store } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: v1 });
    const [arq] = await app.createArqs(nova, { deviceProfileName: "dp1" });
    expect(await app.setDeviceProfileEnabled(ADMIN, "dp1", false)).toMatchObject({ enabled: false });
    const head = await store.headPosition();
    await expectDomainRejection(app.createArqs(nova, { deviceProfileName: "dp1" }), "PROFILE_DISABLED", "deviceProfileName", /dp1 is disabled/);
    expect(await store.headPosition()).toBe(head);
    expect(await app.deleteArqs(nova, { arqUuids: [arq!.uuid] })).toEqual([arq!.uuid]);
    await app.setDeviceProfileEnabled(ADMIN, "dp1", true);
    expect(await app.createArqs(nova, { deviceProfileName: "dp1" })).toHaveLength(1);
  });

  it("a rename keeps the uuid; the old name's ARQs record their deletion on the new name, which then can be deleted", async () => {
    const { app, store } = setup();
    const created = await app.createDeviceProfile(ADMIN, { name: "dp1", groups: v1 });
    const [arq] = await app.createArqs(nova, { deviceProfileName: "dp1" });
    const renamed = await app.renameDeviceProfile(ADMIN, "dp1", "dp2");
    expect(renamed).toMatchObject({ uuid: created.uuid, name: "dp2", version: 1 });
    expect(await app.getDeviceProfileFromLog("dp1")).toBeNull();
    await expectDomainRejection(app.createArqs(nova, { deviceProfileName: "dp1" }), "NOT_FOUND", "deviceProfileName");
    expect(await types(store, stream.deviceProfileUuid(created.uuid))).toEqual(["DeviceProfileUuidClaimed", "DeviceProfileUuidClaimed", "DeviceProfileUuidClaimed"]);
    // In use: the ARQ made under the old name counts.
    await expectDomainRejection(app.deleteDeviceProfiles(ADMIN, { uuids: [created.uuid] }), "CONFLICT", "names");
    await app.deleteArqs(nova, { arqUuids: [arq!.uuid] });
    expect(await types(store, stream.deviceProfile("dp2"))).toEqual(["DeviceProfileRenamedFrom", "DeviceProfileArqsDeleted"]);
    expect(await app.deleteDeviceProfiles(ADMIN, { uuids: [created.uuid] })).toEqual([created.uuid]);
    // The old name is free again.
    expect((await app.createDeviceProfile(ADMIN, { name: "dp1", groups: v1 })).uuid).not.toBe(created.uuid);
  });

  it("the invariant repair follows a rename: an ARQ made under the old name is recorded where the profile lives now, and kept", async () => {
    const { app } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: v1 });
    const [arq] = await app.createArqs(nova, { deviceProfileName: "dp1" });
    await app.renameDeviceProfile(ADMIN, "dp1", "dp2");
    // An INITIAL ARQ that its profile did not record would be a creation to undo: this one is recorded, under dp2.
    expect(await app.repairArqInvariants(ADMIN, arq!.uuid, [])).toEqual([]);
    expect(await app.getArq(arq!.uuid)).toMatchObject({ uuid: arq!.uuid, state: "INITIAL" });
  });

  it("refuses a rename to a name in use and changes nothing", async () => {
    const { app, store } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: v1 });
    await app.createDeviceProfile(ADMIN, { name: "dp2", groups: v2 });
    const head = await store.headPosition();
    await expectDomainRejection(app.renameDeviceProfile(ADMIN, "dp1", "dp2"), "CONFLICT", "newName");
    await expectDomainRejection(app.renameDeviceProfile(ADMIN, "dp1", "bad name"), "BAD_USER_INPUT", "newName");
    expect(await store.headPosition()).toBe(head);
  });

  it("a migration: the dry run lists what would change and writes nothing; the run makes a version each; again, nothing", async () => {
    const { app, store } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: v1 });
    await app.createDeviceProfile(ADMIN, { name: "dp2", groups: [{ "resources:CUSTOM_QAT": "1" }] });
    const mapping = { traits: { CUSTOM_FPGA_INTEL: "CUSTOM_FPGA_INTEL_PAC" }, resourceClasses: {} };
    const head = await store.headPosition();
    const dry = await app.migrateDeviceProfiles(ADMIN, ["dp1", "dp2"], mapping, true);
    expect(dry).toEqual([
      { name: "dp1", uuid: expect.any(String), fromVersion: 1, toVersion: null, changes: [{ groupIndex: 0, from: "trait:CUSTOM_FPGA_INTEL", to: "trait:CUSTOM_FPGA_INTEL_PAC" }] },
    ]);
    expect(await store.headPosition()).toBe(head);
    expect(await app.migrateDeviceProfiles(ADMIN, ["dp1", "dp2"], mapping, false)).toMatchObject([{ name: "dp1", toVersion: 2 }]);
    expect(await app.getDeviceProfileFromLog("dp1")).toMatchObject({ version: 2, groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL_PAC": "required" }] });
    expect((await store.readStream(stream.deviceProfile("dp1"))).at(-1)!.data).toMatchObject({ migration: { traits: { CUSTOM_FPGA_INTEL: "CUSTOM_FPGA_INTEL_PAC" } } });
    expect(await app.migrateDeviceProfiles(ADMIN, ["dp1", "dp2"], mapping, false)).toEqual([]);
  });

  it("a migration that would make one profile invalid migrates none", async () => {
    const { app, store } = setup();
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: v1 });
    await app.createDeviceProfile(ADMIN, { name: "dp2", groups: [{ "trait:CUSTOM_FPGA_INTEL": "required", "trait:CUSTOM_FPGA_INTEL_PAC": "required" }] });
    const head = await store.headPosition();
    await expectDomainRejection(app.migrateDeviceProfiles(ADMIN, ["dp1", "dp2"], { traits: { CUSTOM_FPGA_INTEL: "CUSTOM_FPGA_INTEL_PAC" } }, false), "BAD_USER_INPUT", "mapping", /dp2/);
    expect(await store.headPosition()).toBe(head);
  });

  it("an inline profile is removed with its last ARQ, and made again on the next use", async () => {
    const { app, store } = setup();
    const groups = [{ "resources:FPGA": "1" }];
    const name = inlineProfileName(groups);
    const [a] = await app.createArqsForGroups(nova, groups);
    const [b] = await app.createArqsForGroups(nova, groups);
    expect((await app.getDeviceProfileFromLog(name))!.inline).toBe(true);
    await app.deleteArqs(nova, { arqUuids: [a!.uuid] });
    expect(await app.getDeviceProfileFromLog(name)).not.toBeNull();
    await app.deleteArqs(nova, { arqUuids: [b!.uuid] });
    expect(await app.getDeviceProfileFromLog(name)).toBeNull();
    expect((await types(store, stream.deviceProfile(name))).at(-1)).toBe("DeviceProfileDeleted");
    expect(await app.createArqsForGroups(nova, groups)).toHaveLength(1);
    expect(await app.getDeviceProfileFromLog(name)).toMatchObject({ inline: true });
  });
});

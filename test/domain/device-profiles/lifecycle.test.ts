import { describe, expect, it } from "vitest";
import { deviceProfileDecider, type DeviceProfileCommand } from "../../../src/domain/device-profiles/decider.js";
import type { DeviceProfileEvent, ProfileGroup } from "../../../src/domain/device-profiles/events.js";
import { migrateGroups, validateMigrationMapping } from "../../../src/domain/device-profiles/migration.js";
import { deciderSpec, expectDomainError } from "../decider-spec.js";

const spec = deciderSpec(deviceProfileDecider);
const at = "2026-03-01T10:00:00.000Z";
const later = "2026-03-02T10:00:00.000Z";
const U1 = "11111111-1111-4111-8111-111111111111";
const A1 = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa";
const groups: ProfileGroup[] = [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required" }];
const groups2: ProfileGroup[] = [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL_ARRIA10": "required" }];

const created = (inline = false): DeviceProfileEvent => ({
  type: "DeviceProfileCreated",
  data: { uuid: U1, name: "dp1", description: null, groups, createdAt: at, ...(inline ? { inline: true } : {}) },
});
const updated = (version: number, g = groups2): DeviceProfileEvent => ({
  type: "DeviceProfileUpdated",
  data: { uuid: U1, name: "dp1", version, description: null, groups: g, at: later, migration: null },
});
const disabled: DeviceProfileEvent = { type: "DeviceProfileDisabled", data: { uuid: U1, name: "dp1", at: later } };
const update = (data: { description?: unknown; groups?: unknown; expectedVersion?: number }): DeviceProfileCommand => ({
  type: "UpdateDeviceProfile",
  data: { name: "dp1", at: later, ...data },
});
const createArqs = (ids: string[]): DeviceProfileCommand => ({ type: "CreateArqs", data: { name: "dp1", arqUuids: ids, at } });

describe("device profile lifecycle: update", () => {
  it("an update is a new version with the validated groups", () => {
    spec.given([created()]).when(update({ groups: [{ "resources:FPGA": "1", "trait:custom-fpga-intel-arria10": "required" }] })).then([updated(2)]);
    const state = spec.given([created(), updated(2)]).when(update({ description: "d" })).state();
    expect(state).toMatchObject({ status: "active", profile: { version: 3, description: "d", groups: groups2, updatedAt: later } });
  });
  it("validates the groups as at create", () => {
    spec.given([created()]).when(update({ groups: [{ "resources:FPGA": "x" }] })).thenThrows("BAD_USER_INPUT", "groups[0].resources:FPGA");
    spec.given([created()]).when(update({ groups: [] })).thenThrows("BAD_USER_INPUT", "groups");
    spec.given([created()]).when(update({})).thenThrows("BAD_USER_INPUT", "groups");
  });
  it("the same content again makes no version", () => {
    spec.given([created()]).when(update({ groups })).thenNothing();
  });
  it("refuses a stale expectedVersion with CONFLICT", () => {
    spec.given([created(), updated(2)]).when(update({ groups, expectedVersion: 1 })).thenThrows("CONFLICT", "expectedVersion");
    expect(spec.given([created(), updated(2)]).when(update({ groups, expectedVersion: 2 })).events()).toMatchObject([{ data: { version: 3 } }]);
  });
  it("refuses to update an inline profile, a missing one or a renamed one", () => {
    spec.given([created(true)]).when(update({ groups: groups2 })).thenThrows("BAD_USER_INPUT", "name");
    spec.given([]).when(update({ groups: groups2 })).thenThrows("NOT_FOUND", "name");
    const renamed: DeviceProfileEvent = { type: "DeviceProfileRenamed", data: { uuid: U1, name: "dp1", newName: "dp2", at } };
    spec.given([created(), renamed]).when(update({ groups: groups2 })).thenThrows("NOT_FOUND", "name", /renamed to dp2/);
  });
});

describe("device profile lifecycle: enable and disable", () => {
  it("a disabled profile refuses new ARQs with PROFILE_DISABLED; enabled again, it makes them", () => {
    spec.given([created()]).when({ type: "SetDeviceProfileEnabled", data: { name: "dp1", enabled: false, at: later } }).then([disabled]);
    spec.given([created(), disabled]).when(createArqs([A1])).thenThrows("PROFILE_DISABLED", "deviceProfileName", /dp1 is disabled/);
    const enabled: DeviceProfileEvent = { type: "DeviceProfileEnabled", data: { uuid: U1, name: "dp1", at: later } };
    expect(spec.given([created(), disabled, enabled]).when(createArqs([A1])).events()).toHaveLength(1);
  });
  it("disabling twice decides nothing; ARQs made before still record their deletion", () => {
    const made: DeviceProfileEvent = { type: "DeviceProfileArqsCreated", data: { profileUuid: U1, arqUuids: [A1] } };
    spec.given([created(), disabled]).when({ type: "SetDeviceProfileEnabled", data: { name: "dp1", enabled: false, at } }).thenNothing();
    spec.given([created(), made, disabled]).when({ type: "RecordArqsDeleted", data: { name: "dp1", profileUuid: U1, arqUuids: [A1], at } }).then([
      { type: "DeviceProfileArqsDeleted", data: { profileUuid: U1, arqUuids: [A1] } },
    ]);
  });
});

describe("device profile lifecycle: rename", () => {
  it("the old stream records the rename; the new one takes the profile over whole, live ARQs included", () => {
    const made: DeviceProfileEvent = { type: "DeviceProfileArqsCreated", data: { profileUuid: U1, arqUuids: [A1] } };
    const old = spec.given([created(), made, updated(2), disabled]);
    const renamed = old.when({ type: "RenameDeviceProfile", data: { name: "dp1", newName: "dp2", at: later } });
    renamed.then([{ type: "DeviceProfileRenamed", data: { uuid: U1, name: "dp1", newName: "dp2", at: later } }]);
    expect(renamed.state()).toMatchObject({ status: "renamed", newName: "dp2" });
    const st = old.state();
    if (st.status !== "active") throw new Error("active expected");
    const moved = spec.given([]).when({ type: "ReceiveRenamedProfile", data: { newName: "dp2", profile: st.profile, liveArqUuids: [A1], at: later } }).state();
    expect(moved).toMatchObject({ status: "active", profile: { uuid: U1, name: "dp2", version: 2, enabled: false, groups: groups2, createdAt: at } });
    expect(moved.status === "active" && [...moved.liveArqs]).toEqual([A1]);
  });
  it("refuses a name taken, a bad name, the same name and an inline profile", () => {
    const st = spec.given([created()]).state();
    if (st.status !== "active") throw new Error("active expected");
    spec.given([created()]).when({ type: "ReceiveRenamedProfile", data: { newName: "dp1", profile: st.profile, liveArqUuids: [], at } }).thenThrows("CONFLICT", "newName");
    spec.given([created()]).when({ type: "RenameDeviceProfile", data: { name: "dp1", newName: "bad name", at } }).thenThrows("BAD_USER_INPUT", "newName");
    spec.given([created()]).when({ type: "RenameDeviceProfile", data: { name: "dp1", newName: "dp1", at } }).thenThrows("BAD_USER_INPUT", "newName");
    spec.given([created(true)]).when({ type: "RenameDeviceProfile", data: { name: "dp1", newName: "dp2", at } }).thenThrows("BAD_USER_INPUT", "name");
  });
});

describe("device profile lifecycle: migrations", () => {
  const mapping = validateMigrationMapping({ traits: { CUSTOM_FPGA_INTEL: "custom-fpga-intel-pac" }, resourceClasses: {} });
  it("a mapping that names the profile's trait makes a new version, with the entries that applied", () => {
    spec.given([created()]).when({ type: "MigrateDeviceProfile", data: { name: "dp1", mapping, at: later } }).then([
      {
        type: "DeviceProfileUpdated",
        data: {
          uuid: U1,
          name: "dp1",
          version: 2,
          description: null,
          groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL_PAC": "required" }],
          at: later,
          migration: { traits: { CUSTOM_FPGA_INTEL: "CUSTOM_FPGA_INTEL_PAC" }, resourceClasses: {} },
        },
      },
    ]);
  });
  it("a mapping that names nothing in the profile, or an inline profile, decides nothing", () => {
    const other = validateMigrationMapping({ traits: { CUSTOM_GPU_X: "CUSTOM_GPU_Y" } });
    spec.given([created()]).when({ type: "MigrateDeviceProfile", data: { name: "dp1", mapping: other, at } }).thenNothing();
    spec.given([created(true)]).when({ type: "MigrateDeviceProfile", data: { name: "dp1", mapping, at } }).thenNothing();
  });
  it("renames resource classes, keeping the keys' order", () => {
    const rc = validateMigrationMapping({ resourceClasses: { FPGA: "CUSTOM_ACCELERATOR_FPGA" } });
    const { groups: out, changes } = migrateGroups([{ "resources:FPGA": "1", "accel:function_id": "3AFB" }], rc);
    expect(Object.keys(out[0]!)).toEqual(["resources:CUSTOM_ACCELERATOR_FPGA", "accel:function_id"]);
    expect(changes).toEqual([{ groupIndex: 0, from: "resources:FPGA", to: "resources:CUSTOM_ACCELERATOR_FPGA" }]);
  });
  it("refuses a rename that would give a group one key twice", () => {
    const both: ProfileGroup[] = [{ "trait:CUSTOM_FPGA_INTEL": "required", "trait:CUSTOM_FPGA_INTEL_PAC": "required" }];
    expectDomainError(() => migrateGroups(both, mapping), "BAD_USER_INPUT", "groups[0].trait:CUSTOM_FPGA_INTEL");
  });
  it("refuses bad mappings: not an object, unknown keys, bad names, chains, nothing to rename", () => {
    expectDomainError(() => validateMigrationMapping([]), "BAD_USER_INPUT", "mapping");
    expectDomainError(() => validateMigrationMapping({ trait: {} }), "BAD_USER_INPUT", "mapping.trait");
    expectDomainError(() => validateMigrationMapping({ traits: { HW_CPU_X86_AVX: "CUSTOM_X" } }), "BAD_USER_INPUT", "mapping.traits.HW_CPU_X86_AVX");
    expectDomainError(() => validateMigrationMapping({ traits: { CUSTOM_A: "CUSTOM_B", CUSTOM_B: "CUSTOM_C" } }), "BAD_USER_INPUT", "mapping.traits");
    expectDomainError(() => validateMigrationMapping({ traits: {}, resourceClasses: {} }), "BAD_USER_INPUT", "mapping");
  });
});

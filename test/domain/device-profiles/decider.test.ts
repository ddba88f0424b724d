import { describe, expect, it } from "vitest";
import { deviceProfileDecider, type DeviceProfileCommand } from "../../../src/domain/device-profiles/decider.js";
import type { DeviceProfileEvent, ProfileGroup } from "../../../src/domain/device-profiles/events.js";
import { deciderSpec } from "../decider-spec.js";

const spec = deciderSpec(deviceProfileDecider);
const at = "2026-03-01T10:00:00.000Z";
const U1 = "11111111-1111-4111-8111-111111111111";
const U2 = "22222222-2222-4222-8222-222222222222";
const groups: ProfileGroup[] = [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required" }, { "resources:CUSTOM_QAT": "2" }];

const created = (uuid = U1): DeviceProfileEvent => ({
  type: "DeviceProfileCreated",
  data: { uuid, name: "dp1", description: null, groups, createdAt: at },
});
const deleted = (uuid = U1): DeviceProfileEvent => ({ type: "DeviceProfileDeleted", data: { uuid, name: "dp1", deletedAt: at, version: 1 } });
const arqsCreated = (ids: string[], profileUuid = U1): DeviceProfileEvent => ({ type: "DeviceProfileArqsCreated", data: { profileUuid, arqUuids: ids } });
const create = (data: Partial<Extract<DeviceProfileCommand, { type: "CreateDeviceProfile" }>["data"]> = {}): DeviceProfileCommand => ({
  type: "CreateDeviceProfile",
  data: { uuid: U1, name: "dp1", groups, at, ...data },
});
const del = (uuid?: string): DeviceProfileCommand => ({ type: "DeleteDeviceProfile", data: { name: "dp1", uuid, at } });
const createArqs = (ids: string[], extra: { groupIndex?: number | null; profileUuid?: string } = {}): DeviceProfileCommand => ({
  type: "CreateArqs",
  data: { name: "dp1", arqUuids: ids, at, ...extra },
});

describe("device profile decider", () => {
  it("creates a profile", () => {
    spec.given([]).when(create({ description: "d" })).then([
      { type: "DeviceProfileCreated", data: { uuid: U1, name: "dp1", description: "d", groups, createdAt: at } },
    ]);
  });
  it("validates in decide (pure rules): a bad group is BAD_USER_INPUT", () => {
    spec.given([]).when(create({ groups: [{ "resources:FPGA": "x" }] })).thenThrows("BAD_USER_INPUT", "groups[0].resources:FPGA");
  });
  it("refuses a duplicate name with CONFLICT", () => {
    spec.given([created()]).when(create({ uuid: U2 })).thenThrows("CONFLICT", "name", "A device_profile with name dp1 already exists.");
  });
  it("re-creates a profile after delete, with a new uuid", () => {
    const events = spec.given([created(), deleted()]).when(create({ uuid: U2 })).events();
    expect(events).toMatchObject([{ type: "DeviceProfileCreated", data: { uuid: U2 } }]);
  });
  it("deletes an active profile", () => {
    spec.given([created()]).when(del()).then([{ type: "DeviceProfileDeleted", data: { uuid: U1, name: "dp1", deletedAt: at, version: 1 } }]);
    spec.given([created()]).when(del(U1)).then([deleted()]);
  });
  it("refuses to delete a missing, deleted or re-created (other uuid) profile with NOT_FOUND", () => {
    spec.given([]).when(del()).thenThrows("NOT_FOUND", "name");
    spec.given([created(), deleted()]).when(del()).thenThrows("NOT_FOUND", "name");
    spec.given([created(), deleted(), created(U2)]).when(del(U1)).thenThrows("NOT_FOUND", "uuid");
  });
  it("refuses to delete a profile that live ARQs use, saying how many", () => {
    const err = spec.given([created(), arqsCreated(["a1", "a2", "a3"])]).when(del()).thenThrows("CONFLICT", "names", /used by 3 accelerator requests/);
    expect(err.details).toEqual({ name: "dp1", arqCount: 3 });
  });
  it("deletes once every ARQ is recorded deleted", () => {
    const given: DeviceProfileEvent[] = [created(), arqsCreated(["a1", "a2"]), { type: "DeviceProfileArqsDeleted", data: { profileUuid: U1, arqUuids: ["a1", "a2"] } }];
    spec.given(given).when(del()).then([deleted()]);
  });
  it("counts only the ARQs still live after some are recorded deleted", () => {
    const given: DeviceProfileEvent[] = [created(), arqsCreated(["a1", "a2", "a3", "a4"]), { type: "DeviceProfileArqsDeleted", data: { profileUuid: U1, arqUuids: ["a3", "a1", "gone"] } }];
    spec.given(given).when(del()).thenThrows("CONFLICT", "names", /used by 2 accelerator requests/);
  });

  describe("CreateArqs", () => {
    it("records the ARQs created from the profile (sum of resources over groups)", () => {
      spec.given([created()]).when(createArqs(["a", "b", "c"], { profileUuid: U1 })).then([arqsCreated(["a", "b", "c"])]);
    });
    it("takes one group only with groupIndex", () => {
      spec.given([created()]).when(createArqs(["a", "b"], { groupIndex: 1 })).then([arqsCreated(["a", "b"])]);
    });
    it("refuses a groupIndex out of range with BAD_USER_INPUT", () => {
      spec.given([created()]).when(createArqs(["a"], { groupIndex: 2 })).thenThrows("BAD_USER_INPUT", "groupIndex", /0\.\.1/);
      spec.given([created()]).when(createArqs(["a"], { groupIndex: -1 })).thenThrows("BAD_USER_INPUT", "groupIndex");
    });
    it("refuses the wrong number of ids", () => {
      spec.given([created()]).when(createArqs(["a", "b"])).thenThrows("BAD_USER_INPUT", "arqUuids");
      spec.given([created()]).when(createArqs(["a", "a", "b"])).thenThrows("BAD_USER_INPUT", "arqUuids");
    });
    it("refuses a missing profile (NOT_FOUND) or one re-created meanwhile (CONFLICT)", () => {
      spec.given([]).when(createArqs(["a"])).thenThrows("NOT_FOUND", "name", "Device Profile not found with name=dp1");
      spec.given([created(), deleted(), created(U2)]).when(createArqs(["a", "b", "c"], { profileUuid: U1 })).thenThrows("CONFLICT", "deviceProfileName");
    });
  });

  describe("RecordArqsDeleted", () => {
    const given = [created(), arqsCreated(["a", "b"])];
    it("records only ARQs still counted live, and is idempotent", () => {
      const cmd: DeviceProfileCommand = { type: "RecordArqsDeleted", data: { name: "dp1", profileUuid: U1, arqUuids: ["a", "zz"], at } };
      spec.given(given).when(cmd).then([{ type: "DeviceProfileArqsDeleted", data: { profileUuid: U1, arqUuids: ["a"] } }]);
      spec.given([...given, { type: "DeviceProfileArqsDeleted", data: { profileUuid: U1, arqUuids: ["a"] } }]).when(cmd).thenNothing();
    });
    it("ignores ARQs of a former incarnation", () => {
      const cmd: DeviceProfileCommand = { type: "RecordArqsDeleted", data: { name: "dp1", profileUuid: U2, arqUuids: ["a"], at } };
      spec.given(given).when(cmd).thenNothing();
    });
  });
});

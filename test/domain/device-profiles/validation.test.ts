import { describe, expect, it } from "vitest";
import { MAX_RESOURCE_AMOUNT, validateDeviceProfile } from "../../../src/domain/device-profiles/validation.js";
import { expectDomainError } from "../decider-spec.js";

const UUID = "8411555e-3cbf-47de-988c-b5e30bbfa035";
const ok = (groups: unknown, extra: Record<string, unknown> = {}) => validateDeviceProfile({ name: "dp1", groups, ...extra });
const rejects = (input: Record<string, unknown>, field: string, message?: RegExp | string) =>
  expectDomainError(() => validateDeviceProfile({ name: "dp1", groups: [{ "resources:FPGA": "1" }], ...input } as never), "BAD_USER_INPUT", field, message);
const rejectsGroup = (group: unknown, field: string, message?: RegExp | string) => rejects({ groups: [group] }, field, message);

describe("device profile validation (cyborg-reference 3 and the spec)", () => {
  describe("name", () => {
    it("accepts letters, digits, '-' and '_'", () => {
      expect(validateDeviceProfile({ name: "My-dp_01", groups: [{ "resources:FPGA": "1" }] }).name).toBe("My-dp_01");
    });
    it("accepts 255 characters", () => {
      expect(validateDeviceProfile({ name: "a".repeat(255), groups: [{ "resources:FPGA": "1" }] }).name).toHaveLength(255);
    });
    it("refuses a missing or empty name with BAD_USER_INPUT (Cyborg: 500)", () => {
      rejects({ name: undefined }, "name", "DeviceProfile name needed.");
      rejects({ name: "" }, "name", "DeviceProfile name needed.");
      rejects({ name: 42 }, "name");
    });
    it("refuses other characters, as Cyborg's ^[a-zA-Z0-9-_]+$", () => {
      for (const name of ["!", "a b", "a:b", "a=b", "dp.1", "!@#$%^&*()=-[]"]) rejects({ name }, "name", /must be of the form/);
    });
    it("refuses 256 characters (Cyborg: a DB error, 500)", () => {
      rejects({ name: "a".repeat(256) }, "name", /longer than 255/);
    });
  });

  describe("description and uuid", () => {
    it("takes an optional description, null when absent", () => {
      expect(ok([{ "resources:FPGA": "1" }]).description).toBeNull();
      expect(ok([{ "resources:FPGA": "1" }], { description: "Image classification" }).description).toBe("Image classification");
    });
    it("refuses a description that is not a string", () => {
      rejects({ description: 3 }, "description");
    });
    it("takes an optional uuid, lower-cased", () => {
      expect(ok([{ "resources:FPGA": "1" }]).uuid).toBeNull();
      expect(ok([{ "resources:FPGA": "1" }], { uuid: UUID.toUpperCase() }).uuid).toBe(UUID);
    });
    it("refuses a uuid that is not one", () => {
      rejects({ uuid: "not-a-uuid" }, "uuid");
    });
  });

  describe("groups", () => {
    it("refuses missing, empty or non-list groups (Cyborg: 500)", () => {
      rejects({ groups: undefined }, "groups");
      rejects({ groups: [] }, "groups");
      rejects({ groups: { "resources:FPGA": "1" } }, "groups");
    });
    it("refuses an empty group or one that is not an object", () => {
      rejectsGroup({}, "groups[0]", /at least one key/);
      rejectsGroup(["resources:FPGA"], "groups[0]");
      rejectsGroup(null, "groups[0]");
      rejects({ groups: [{ "resources:FPGA": "1" }, "x"] }, "groups[1]");
    });
    it("keeps group order and key order", () => {
      const groups = [
        { "trait:CUSTOM_B": "required", "resources:FPGA": "1", "accel:function_id": UUID },
        { "resources:CUSTOM_ACCELERATOR_GPU": "2", "trait:CUSTOM_GPU_MODEL_NAME": "required" },
      ];
      const out = ok(groups).groups;
      expect(out).toEqual(groups);
      expect(out.map((g) => Object.keys(g))).toEqual(groups.map((g) => Object.keys(g)));
    });
    it("refuses keys without a resources:, trait: or accel: prefix", () => {
      rejectsGroup({ "fake:FPGA": "1" }, "groups[0].fake:FPGA", /\^\(resources:\|trait:\|accel:\)/);
      rejectsGroup({ FPGA: "1" }, "groups[0].FPGA");
    });
    it("refuses values that are not strings or numbers", () => {
      rejectsGroup({ "resources:FPGA": true }, "groups[0].resources:FPGA", /must be strings/);
      rejectsGroup({ "trait:CUSTOM_X": null }, "groups[0].trait:CUSTOM_X");
    });
    it("stores numbers as strings, as Cyborg", () => {
      expect(ok([{ "resources:FPGA": 2 }]).groups).toEqual([{ "resources:FPGA": "2" }]);
    });
    it("refuses two keys that are the same after normalisation", () => {
      rejectsGroup({ "trait:CUSTOM_X": "required", "trait: custom_x": "forbidden" }, "groups[0].trait: custom_x", /Duplicate key/);
    });
  });

  describe("trait: keys", () => {
    it("accepts required and forbidden", () => {
      expect(ok([{ "trait:CUSTOM_A": "required", "trait:CUSTOM_B": "forbidden" }]).groups[0]).toEqual({
        "trait:CUSTOM_A": "required",
        "trait:CUSTOM_B": "forbidden",
      });
    });
    it("refuses another value", () => {
      rejectsGroup({ "trait:CUSTOM_A": "fake" }, "groups[0].trait:CUSTOM_A", "Unsupported trait value fake, expected one of required, forbidden");
      rejectsGroup({ "trait:CUSTOM_A": "Required" }, "groups[0].trait:CUSTOM_A");
    });
    it("refuses a trait that does not start with CUSTOM_ (standard traits included)", () => {
      rejectsGroup({ "trait:FAKE_TRAIT": "required" }, "groups[0].trait:FAKE_TRAIT", "Unsupported trait name format FAKE_TRAIT, should start with CUSTOM_");
      rejectsGroup({ "trait:OWNER_CYBORG": "required" }, "groups[0].trait:OWNER_CYBORG");
    });
    it("refuses characters outside the custom-trait syntax", () => {
      rejectsGroup({ "trait:CUSTOM_A.B": "required" }, "groups[0].trait:CUSTOM_A.B", /CUSTOM_\[A-Z0-9_\]\+/);
      rejectsGroup({ "trait:CUSTOM_": "required" }, "groups[0].trait:CUSTOM_");
    });
    it("strips spaces around the name in place, keeping the key's position (Cyborg moves it to the end)", () => {
      const g = ok([{ "trait:  CUSTOM_X ": "required", "resources:FPGA": "1" }]).groups[0]!;
      expect(Object.keys(g)).toEqual(["trait:CUSTOM_X", "resources:FPGA"]);
    });
    it("upper-cases and turns hyphens into underscores (spec)", () => {
      expect(Object.keys(ok([{ "trait:custom_fpga-intel-arria10": "required" }]).groups[0]!)).toEqual(["trait:CUSTOM_FPGA_INTEL_ARRIA10"]);
    });
  });

  describe("resources: keys", () => {
    it("accepts Cyborg's standard classes and any CUSTOM_ class", () => {
      for (const rc of ["FPGA", "GPU", "VGPU", "PGPU", "CUSTOM_QAT", "CUSTOM_NIC", "CUSTOM_SSD", "CUSTOM_PCI", "CUSTOM_ACCELERATOR_FPGA"]) {
        expect(Object.keys(ok([{ [`resources:${rc}`]: "1" }]).groups[0]!)).toEqual([`resources:${rc}`]);
      }
    });
    it("refuses another class", () => {
      rejectsGroup({ "resources:FAKE_RC": "1" }, "groups[0].resources:FAKE_RC", "Unsupported resource class FAKE_RC");
      rejectsGroup({ "resources:VCPU": "1" }, "groups[0].resources:VCPU");
    });
    it("strips spaces and normalises the class name", () => {
      expect(Object.keys(ok([{ "resources: FPGA ": "1" }]).groups[0]!)).toEqual(["resources:FPGA"]);
      expect(Object.keys(ok([{ "resources:custom-qat": "1" }]).groups[0]!)).toEqual(["resources:CUSTOM_QAT"]);
    });
    it("refuses an amount that is not an integer", () => {
      for (const v of ["fake", "1.5", "", "1e3"]) rejectsGroup({ "resources:FPGA": v }, "groups[0].resources:FPGA", /Resources number .* is invalid/);
      rejectsGroup({ "resources:FPGA": 1.5 }, "groups[0].resources:FPGA");
    });
    it("refuses zero and negative amounts (Cyborg accepts them)", () => {
      rejectsGroup({ "resources:FPGA": "0" }, "groups[0].resources:FPGA");
      rejectsGroup({ "resources:FPGA": "-1" }, "groups[0].resources:FPGA");
      rejectsGroup({ "resources:FPGA": -1 }, "groups[0].resources:FPGA");
    });
    it(`caps an amount at ${MAX_RESOURCE_AMOUNT}`, () => {
      expect(ok([{ "resources:FPGA": String(MAX_RESOURCE_AMOUNT) }]).groups[0]).toEqual({ "resources:FPGA": String(MAX_RESOURCE_AMOUNT) });
      rejectsGroup({ "resources:FPGA": String(MAX_RESOURCE_AMOUNT + 1) }, "groups[0].resources:FPGA");
    });
    it("normalises the amount's spelling", () => {
      expect(ok([{ "resources:FPGA": " 02 " }]).groups[0]).toEqual({ "resources:FPGA": "2" });
    });
  });

  describe("accel: keys (validated, unlike Cyborg)", () => {
    it("accepts every valid key", () => {
      for (const group of [
        { "accel:bitstream_id": UUID, "accel:attach_target": "VM" },
        { "accel:bitstream_name": "resnet50-v1_gbs" },
        { "accel:bitstream_name": "nlb0.gbs" },
        { "accel:function_name": "image:classify=v2" },
      ]) {
        expect(ok([group]).groups[0]).toEqual(group);
      }
      expect(ok([{ "accel:function_id": UUID.toUpperCase() }]).groups[0]).toEqual({ "accel:function_id": UUID });
      for (const t of ["VM", "host", "none"]) expect(ok([{ "accel:attach_target": t }]).groups[0]).toEqual({ "accel:attach_target": t });
    });
    it("refuses an unknown key, listing the valid ones", () => {
      const err = rejectsGroup({ "accel:video_ram": "2GB" }, "groups[0].accel:video_ram", /Unknown accel key video_ram/);
      for (const k of ["bitstream_id", "bitstream_name", "function_id", "function_name", "attach_target"]) expect(err.message).toContain(`accel:${k}`);
      rejectsGroup({ "accel:constructor": "x" }, "groups[0].accel:constructor");
    });
    it("refuses a bitstream id that is not a uuid (an id of the catalogue)", () => {
      rejectsGroup({ "accel:bitstream_id": "3AFB" }, "groups[0].accel:bitstream_id", /UUID/);
    });
    it("accepts function ids as drivers report them: the seed's '3AFB', AFU ids, uuids", () => {
      expect(ok([{ "accel:function_id": "3AFB" }]).groups[0]).toEqual({ "accel:function_id": "3AFB" });
      expect(ok([{ "accel:function_id": "d8424dc4a4a3c413f89e433683f9040b" }]).groups[0]).toEqual({ "accel:function_id": "d8424dc4a4a3c413f89e433683f9040b" });
      expect(ok([{ "accel:function_id": "nlb_0-v2" }]).groups[0]).toEqual({ "accel:function_id": "nlb_0-v2" });
    });
    it("refuses function ids outside letters, digits, '-' and '_'", () => {
      for (const v of ["3A FB", "f.gbs", "a:b", ""]) {
        rejectsGroup({ "accel:function_id": v }, "groups[0].accel:function_id", /letters, digits/);
      }
      rejectsGroup({ "accel:function_id": "x".repeat(256) }, "groups[0].accel:function_id", /at most 255 characters/);
    });
    it("refuses more than one of bitstream_id, bitstream_name, function_id and function_name", () => {
      rejectsGroup({ "accel:bitstream_id": UUID, "accel:function_id": UUID }, "groups[0].accel:function_id", /exclude each other/);
      rejectsGroup({ "accel:function_id": "3AFB", "accel:function_name": "nlb0" }, "groups[0].accel:function_name", /accel:function_id and accel:function_name exclude each other/);
      rejectsGroup({ "accel:bitstream_name": "nlb0.gbs", "accel:bitstream_id": UUID }, "groups[0].accel:bitstream_name", /exclude each other/);
    });
    it("refuses an attach_target outside VM, host, none", () => {
      rejectsGroup({ "accel:attach_target": "vm" }, "groups[0].accel:attach_target", /VM, host, none/);
    });
    it("refuses names outside the spec's alphabet", () => {
      for (const v of ["a b", "nlb0.", ".gbs", "nlb0.g.bs", "nlb0.g=s"]) rejectsGroup({ "accel:bitstream_name": v }, "groups[0].accel:bitstream_name");
      rejectsGroup({ "accel:function_name": "f.gbs" }, "groups[0].accel:function_name");
      rejectsGroup({ "accel:function_name": "" }, "groups[0].accel:function_name");
    });
  });

  it("reports the first bad group by index", () => {
    rejects({ groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "x" }] }, "groups[1].resources:FPGA");
  });
});

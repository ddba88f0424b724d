/** `accel:alternatives` and `accel:match`: validated when the profile is created, and honoured at bind. */
import { describe, expect, it } from "vitest";
import { validateDeviceProfile } from "../../../src/domain/device-profiles/validation.js";
import { requirementsOf } from "../../../src/domain/inventory/target-fit.js";
import { DomainError } from "../../../src/domain/shared/types.js";

const profile = (groups: Record<string, string>[]) => validateDeviceProfile({ name: "p", groups });
const refusal = (groups: Record<string, string>[]) => {
  try {
    profile(groups);
  } catch (err) {
    return err as DomainError;
  }
  throw new Error("accepted");
};

describe("accel:alternatives", () => {
  it("is stored normalised, in order of preference", () => {
    const g = profile([{ "resources:CUSTOM_MIG_3G_40GB": "1", "accel:alternatives": " resources:CUSTOM_GPU_L40S=1 ; trait:CUSTOM_X=forbidden,resources:CUSTOM_GPU_T4=2" }]).groups[0]!;
    expect(g["accel:alternatives"]).toBe("resources:CUSTOM_GPU_L40S=1;resources:CUSTOM_GPU_T4=2,trait:CUSTOM_X=forbidden");
  });

  it.each([
    ["resources:CUSTOM_GPU_T4=0", "amount"],
    ["trait:CUSTOM_X=required", "names no resources"],
    ["resources:CUSTOM_A=1,resources:CUSTOM_B=1", "two resources"],
    ["resources:CUSTOM_A=1;", "alternative 2 is empty"],
    ["resources:CUSTOM_A=1,trait:CUSTOM_X=maybe", "required or forbidden"],
    ["resources:CUSTOM_A=1,accel:attach_target=VM", "unknown entry"],
  ])("refuses %s, saying why", (value, why) => {
    const err = refusal([{ "resources:CUSTOM_GPU": "1", "accel:alternatives": value }]);
    expect(err.code).toBe("BAD_USER_INPUT");
    expect(err.field).toBe("groups[0].accel:alternatives");
    expect(err.message).toContain(why);
  });

  it("needs exactly one resources: key beside it", () => {
    expect(refusal([{ "accel:alternatives": "resources:CUSTOM_A=1" }]).message).toContain("exactly one resources:");
  });

  it("lets a bind land on a provider meeting an alternative", () => {
    const g = profile([{ "resources:CUSTOM_MIG": "1", "accel:alternatives": "resources:CUSTOM_GPU_T4=1,trait:CUSTOM_X=required" }]).groups[0]!;
    expect(requirementsOf(g).alternatives).toEqual([{ resourceClasses: ["CUSTOM_GPU_T4"], required: ["CUSTOM_X"], forbidden: [] }]);
  });
});

describe("accel:match", () => {
  it("is accepted when at least two groups name the attribute", () => {
    const p = profile([
      { "resources:CUSTOM_GPU": "1", "accel:match": "numa_node, link_domain" },
      { "resources:CUSTOM_NIC": "1", "accel:match": "numa_node" },
      { "resources:CUSTOM_GPU": "1", "accel:match": "link_domain" },
    ]);
    expect(p.groups[0]!["accel:match"]).toBe("numa_node,link_domain");
  });

  it("refuses an attribute only one group names, an unknown one, or one given twice", () => {
    expect(refusal([{ "resources:CUSTOM_GPU": "1", "accel:match": "numa_node" }, { "resources:CUSTOM_NIC": "1" }]).message).toContain("alone constrains nothing");
    expect(refusal([{ "resources:CUSTOM_GPU": "1", "accel:match": "rack" }]).message).toContain("unknown attribute");
    expect(refusal([{ "resources:CUSTOM_GPU": "1", "accel:match": "numa_node,numa_node" }]).message).toContain("twice");
  });
});

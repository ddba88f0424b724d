import { describe, expect, it } from "vitest";
import { validateDeviceProfile } from "../../../src/domain/device-profiles/validation.js";
import { normalisationWarnings, unreportedWarnings } from "../../../src/domain/device-profiles/warnings.js";
import { expectDomainError } from "../decider-spec.js";

describe("what a profile's author is told", () => {
  it("names the prefix a misspelt key was probably meant to have, and the valid ones", () => {
    const refuse = (key: string, message: RegExp) =>
      expectDomainError(() => validateDeviceProfile({ name: "dp", groups: [{ [key]: "1" }] }), "BAD_USER_INPUT", `groups[0].${key}`, message);
    refuse("resource:FPGA", /^Device profile group keys must be of the form .*; did you mean "resources:FPGA"\? got "resource:FPGA"\. The valid prefixes are resources: .*trait: .*accel: /);
    refuse("Trait:CUSTOM_X", /did you mean "trait:CUSTOM_X"\?/);
    refuse("gpu", /^(?!.*did you mean).*got "gpu"\. The valid prefixes are/);
  });

  it("says which keys and values were stored in another form than sent", () => {
    const sent = [{ "resources:fpga": "+1", "trait:custom_fake": "required", "accel:attach_target": "VM" }];
    const stored = validateDeviceProfile({ name: "dp", groups: sent }).groups;
    expect(normalisationWarnings(sent, stored)).toEqual([
      'groups[0]: key "resources:fpga" is stored as "resources:FPGA"',
      'groups[0].resources:FPGA: value "+1" is stored as "1"',
      'groups[0]: key "trait:custom_fake" is stored as "trait:CUSTOM_FAKE"',
    ]);
    expect(normalisationWarnings([{ "resources:FPGA": "1" }], [{ "resources:FPGA": "1" }])).toEqual([]);
  });

  it("says which required traits and resource classes no host reports", () => {
    const groups: Array<Record<string, string>> = [{ "resources:FPGA": "1", "trait:CUSTOM_A": "required", "trait:CUSTOM_B": "forbidden" }, { "resources:PGPU": "1" }];
    const w = unreportedWarnings(groups, { traits: new Set(["CUSTOM_OTHER"]), resourceClasses: new Set(["FPGA"]) });
    expect(w).toHaveLength(2);
    expect(w[0]).toMatch(/^groups\[0\]: no host reports trait CUSTOM_A yet/);
    expect(w[1]).toMatch(/^groups\[1\]: no host reports resource class PGPU yet/);
    expect(unreportedWarnings(groups, { traits: new Set(["CUSTOM_A"]), resourceClasses: new Set(["FPGA", "PGPU"]) })).toEqual([]);
  });

  it("does not take an amount drawn from a capacity for a resource class no host reports", () => {
    const groups = [{ "resources:SRIOV_NET_VF": "1", "resources:NET_BW_EGR_KILOBIT_PER_SEC": "1000000" }];
    expect(unreportedWarnings(groups, { traits: new Set(), resourceClasses: new Set(["SRIOV_NET_VF"]) })).toEqual([]);
    expect(unreportedWarnings(groups, { traits: new Set(), resourceClasses: new Set() })).toEqual([expect.stringMatching(/resource class SRIOV_NET_VF yet/)]);
  });
});

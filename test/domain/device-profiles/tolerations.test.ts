/** `accel:tolerations`: which device taints a group's binds tolerate, validated like every other key. */
import { describe, expect, it } from "vitest";
import { validateDeviceProfile } from "../../../src/domain/device-profiles/validation.js";
import { MAX_TOLERATIONS, parseTolerations, tolerates, tolerationsOf } from "../../../src/domain/shared/tolerations.js";
import { expectDomainError } from "../decider-spec.js";

const group = (value: string) => validateDeviceProfile({ name: "burn-in", groups: [{ "resources:FPGA": "1", "accel:tolerations": value }] }).groups[0]!;
const rejects = (value: string, message: RegExp) =>
  expectDomainError(() => group(value), "BAD_USER_INPUT", "groups[0].accel:tolerations", message);

describe("accel:tolerations", () => {
  it("holds keys, with a value and an effect or without, stored in one spelling", () => {
    expect(group(" cyborg.openstack.org/health:NoSchedule , example.com/burn-in=gpu,k=:NoExecute")["accel:tolerations"]).toBe(
      "cyborg.openstack.org/health:NoSchedule,example.com/burn-in=gpu,k=:NoExecute",
    );
    expect(parseTolerations("example.com/burn-in=gpu,k")).toEqual([
      { key: "example.com/burn-in", value: "gpu", effect: null },
      { key: "k", value: null, effect: null },
    ]);
  });
  it("refuses what it could not honour, saying what is wrong", () => {
    rejects("k:PreferNoSchedule", /unknown effect "PreferNoSchedule"/);
    rejects("Bad Key", /key "Bad Key" is not valid/);
    rejects("k=a b", /value "a b" is not valid/);
    rejects("k,,j", /an empty toleration/);
    rejects("k,k", /given twice/);
    rejects(Array.from({ length: MAX_TOLERATIONS + 1 }, (_, i) => `k${i}`).join(","), new RegExp(`at most ${MAX_TOLERATIONS}`));
  });
  it("matches a taint by key, and by value and effect where it gives them", () => {
    const taint = { key: "example.com/burn-in", value: "gpu", effect: "NoSchedule" as const };
    expect(tolerates(parseTolerations("example.com/burn-in"), taint)).toBe(true);
    expect(tolerates(parseTolerations("example.com/burn-in=gpu:NoSchedule"), taint)).toBe(true);
    expect(tolerates(parseTolerations("example.com/burn-in="), taint)).toBe(false);
    expect(tolerates(parseTolerations("example.com/burn-in:NoExecute"), taint)).toBe(false);
    expect(tolerates(parseTolerations("example.com/other"), taint)).toBe(false);
    expect(tolerates([], taint)).toBe(false);
  });
  it("a group without the key tolerates nothing; a stored value that no longer parses tolerates nothing", () => {
    expect(tolerationsOf({ "resources:FPGA": "1" })).toEqual([]);
    expect(tolerationsOf({ "accel:tolerations": "Bad Key" })).toEqual([]);
  });
});

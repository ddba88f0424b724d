import { describe, expect, it } from "vitest";
import { planArqs } from "../../../src/domain/arqs/plan.js";
import { arqCountFor, groupArqCount } from "../../../src/domain/device-profiles/arq-counts.js";
import type { ProfileGroup } from "../../../src/domain/device-profiles/events.js";
import { expectDomainError } from "../decider-spec.js";

describe("ARQs per profile (cyborg-reference 2.3)", () => {
  it("one ARQ per unit of every resources: amount in a group, summed", () => {
    expect(groupArqCount({ "resources:FPGA": "2", "resources:CUSTOM_QAT": "3", "trait:CUSTOM_X": "required" })).toBe(5);
  });
  it("a group with no resources asks for none", () => {
    expect(groupArqCount({ "trait:CUSTOM_X": "required" })).toBe(0);
    expect(arqCountFor([{ "trait:CUSTOM_X": "required" }])).toBe(0);
  });
  it("Xilinx: trait:CUSTOM_FPGA_XILINX=required doubles resources:FPGA", () => {
    expect(groupArqCount({ "resources:FPGA": "1", "trait:CUSTOM_FPGA_XILINX": "required" })).toBe(2);
    expect(groupArqCount({ "resources:FPGA": "3", "trait:CUSTOM_FPGA_XILINX": "required", "resources:CUSTOM_QAT": "1" })).toBe(6);
    expect(groupArqCount({ "resources:FPGA": "1", "trait:CUSTOM_FPGA_XILINX": "forbidden" })).toBe(1);
  });
  it("three groups give group ids 0..2 in order", () => {
    const groups = [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }, { "resources:FPGA": "1" }];
    const plan = planArqs(groups, null, ["a", "b", "c"]);
    expect(plan.map((p) => [p.arqUuid, p.groupId])).toEqual([["a", 0], ["b", 1], ["c", 2]]);
    expect(plan[0]!.group).toEqual(groups[0]);
    expect(plan[0]!.group).not.toBe(groups[0]);
  });
  it("one group only with groupIndex", () => {
    const groups: ProfileGroup[] = [{ "resources:FPGA": "1" }, { "resources:GPU": "2" }];
    expect(arqCountFor(groups, 1)).toBe(2);
    expect(planArqs(groups, 1, ["a", "b"]).map((p) => p.groupId)).toEqual([1, 1]);
  });
  it("a groupIndex out of range is BAD_USER_INPUT", () => {
    for (const i of [-1, 2, 1.5]) expectDomainError(() => arqCountFor([{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }], i), "BAD_USER_INPUT", "groupIndex");
  });
  it("needs exactly as many ids as ARQs", () => {
    expectDomainError(() => planArqs([{ "resources:FPGA": "2" }], null, ["a"]), "BAD_USER_INPUT", "arqUuids");
    expectDomainError(() => planArqs([{ "resources:FPGA": "1" }], null, ["a", "b"]), "BAD_USER_INPUT", "arqUuids");
  });
});

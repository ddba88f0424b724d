import { describe, expect, it } from "vitest";
import { decideAllocate } from "../../../src/domain/inventory/allocation.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { alternativeMet, requirementsOf, TARGET_MISMATCH } from "../../../src/domain/inventory/target-fit.js";
import type { DomainError } from "../../../src/domain/shared/types.js";
import { expectDomainError } from "../decider-spec.js";
import { at, bdf, fpga, HOST, reported, types } from "./fixtures.js";

// The fixture's FPGA: rc FPGA, trait CUSTOM_FPGA_INTEL (and OWNER_CYBORG, as every provider Cyborg owns).
const RP = rpUuidFor(`${HOST}_${bdf("af")}`);
const host = reported([fpga("af")]);
const allocateFor = (group: Record<string, string>) =>
  decideAllocate(host, { hostname: HOST, rpUuid: RP, arqUuid: "arq-1", instanceUuid: "vm-1", at, requirements: requirementsOf(group) });
const refusal = (group: Record<string, string>, message: RegExp) => expectDomainError(() => allocateFor(group), "BAD_USER_INPUT", "deviceRpUuid", message);

describe("a bind's target is checked against the ARQ's request group", () => {
  it("reads the group's resource classes, required and forbidden traits", () => {
    expect(requirementsOf({ "resources:FPGA": "1", "trait:CUSTOM_A": "required", "trait:CUSTOM_B": "forbidden", "accel:function_id": "x" })).toEqual({
      resourceClasses: ["FPGA"],
      required: ["CUSTOM_A"],
      forbidden: ["CUSTOM_B"],
    });
  });
  it("allocates on a provider that offers the class, carries the required traits and none forbidden", () => {
    expect(types(allocateFor({ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required", "trait:OWNER_CYBORG": "required", "trait:CUSTOM_GPU_NVIDIA": "forbidden" }))).toEqual([
      "AttachHandleAllocated",
    ]);
    expect(types(allocateFor({ "resources:GPU": "1", "resources:FPGA": "1" }))).toEqual(["AttachHandleAllocated"]);
  });
  it("says which of the group's ways a provider meets: 0 its own, i the i-th alternative, null without alternatives", () => {
    const card = [...[...host.devices.values()][0]!.deployables.values()][0]!;
    expect(alternativeMet(card, requirementsOf({ "resources:FPGA": "1" }))).toBeNull();
    expect(alternativeMet(card, requirementsOf({ "resources:FPGA": "1", "accel:alternatives": "resources:GPU=1" }))).toBe(0);
    expect(alternativeMet(card, requirementsOf({ "resources:PGPU": "1", "accel:alternatives": "resources:GPU=1;resources:FPGA=1" }))).toBe(2);
    expect(alternativeMet(card, requirementsOf({ "resources:PGPU": "1", "accel:alternatives": "resources:GPU=1" }))).toBeNull();
  });
  it("allocates on a provider meeting one of the group's accel:alternatives, and refuses one meeting none", () => {
    expect(types(allocateFor({ "resources:PGPU": "1", "accel:alternatives": "resources:GPU=1;resources:FPGA=1,trait:CUSTOM_FPGA_INTEL=required" }))).toEqual(["AttachHandleAllocated"]);
    refusal({ "resources:PGPU": "1", "accel:alternatives": "resources:FPGA=1,trait:CUSTOM_FPGA_INTEL=forbidden" }, /the group asks for PGPU/);
  });
  it("refuses a provider of another resource class, naming both", () => {
    const err = refusal({ "resources:PGPU": "1" }, /offers resource class FPGA, the group asks for PGPU/);
    expect(err.details).toEqual({ reason: TARGET_MISMATCH, deviceRpUuid: RP, resourceClass: { offered: "FPGA", wanted: ["PGPU"] }, missing: [], forbidden: [] });
  });
  it("refuses a provider that lacks a required trait, naming each one missing", () => {
    const err = refusal({ "resources:FPGA": "1", "trait:CUSTOM_NVIDIA_T4": "required", "trait:CUSTOM_FPGA_INTEL": "required", "trait:CUSTOM_X": "required" }, /lacks required traits CUSTOM_NVIDIA_T4, CUSTOM_X$/);
    expect((err as DomainError).details).toMatchObject({ missing: ["CUSTOM_NVIDIA_T4", "CUSTOM_X"], forbidden: [], resourceClass: null });
  });
  it("refuses a provider that carries a forbidden trait", () => {
    const err = refusal({ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "forbidden" }, /carries forbidden trait CUSTOM_FPGA_INTEL$/);
    expect(err.details).toMatchObject({ forbidden: ["CUSTOM_FPGA_INTEL"], missing: [] });
  });
  it("names every problem at once", () => {
    refusal({ "resources:GPU": "1", "trait:CUSTOM_A": "required", "trait:CUSTOM_FPGA_INTEL": "forbidden" }, /resource class FPGA, the group asks for GPU; it lacks required trait CUSTOM_A; it carries forbidden trait CUSTOM_FPGA_INTEL/);
  });
  it("refuses a provider with no resource class for a group that asks for one", () => {
    const bare = reported([fpga("af", { deployables: [{ name: `${HOST}_${bdf("af")}`, numAccelerators: 1, attributes: [], attachHandles: [{ type: "PCI", info: { domain: "0000", bus: "af", device: "00", function: "0" } }] }] })]);
    expectDomainError(
      () => decideAllocate(bare, { hostname: HOST, rpUuid: RP, arqUuid: "arq-1", instanceUuid: "vm-1", at, requirements: requirementsOf({ "resources:FPGA": "1" }) }),
      "BAD_USER_INPUT",
      "deviceRpUuid",
      /offers no resource class, the group asks for FPGA/,
    );
  });
});

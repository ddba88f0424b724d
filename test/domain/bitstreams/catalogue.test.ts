import { describe, expect, it } from "vitest";
import { checkChecksum, fitsRegion, validateBitstreamMetadata, type Bitstream } from "../../../src/domain/bitstreams/bitstream.js";
import { catalogueDecider } from "../../../src/domain/bitstreams/decider.js";
import { deciderSpec, expectDomainError } from "../decider-spec.js";

const at = "2026-03-01T10:00:00.000Z";
const B: Bitstream = {
  id: "0a000000-0000-4000-8000-00000000000a",
  name: "nlb0.gbs",
  functionId: "3AFB",
  functionName: "nlb0",
  regionType: "9926ab6d-6c92-5a68-aabc-a7d84c545738",
  vendor: "intel",
  checksum: `sha256:${"a".repeat(64)}`,
  size: 42,
  createdAt: at,
};
const spec = deciderSpec(catalogueDecider);

describe("the embedded catalogue's stream", () => {
  it("adds a bitstream once; an id is never given out again", () => {
    spec.given().when({ type: "AddBitstream", data: B }).then([{ type: "BitstreamAdded", data: B }]);
    spec.given([{ type: "BitstreamAdded", data: B }]).when({ type: "AddBitstream", data: B }).thenThrows("CONFLICT", "id");
    const removed = { type: "BitstreamRemoved" as const, data: { id: B.id, name: B.name, checksum: B.checksum, at } };
    spec.given([{ type: "BitstreamAdded", data: B }, removed]).when({ type: "AddBitstream", data: B }).thenThrows("CONFLICT", "id");
  });
  it("removes a bitstream only while nothing uses it, saying what does", () => {
    const given = spec.given([{ type: "BitstreamAdded", data: B }]);
    given.when({ type: "RemoveBitstream", data: { id: B.id, usedBy: [], at } }).then([{ type: "BitstreamRemoved", data: { id: B.id, name: B.name, checksum: B.checksum, at } }]);
    const err = given.when({ type: "RemoveBitstream", data: { id: B.id, usedBy: ["deployable compute1_FakeDevice runs it", "profile fpga-1 names it"], at } }).thenThrows("CONFLICT", "id");
    expect(err.message).toMatch(/in use: deployable compute1_FakeDevice runs it; profile fpga-1 names it/);
    spec.given().when({ type: "RemoveBitstream", data: { id: B.id, usedBy: [], at } }).thenThrows("NOT_FOUND", "id");
  });
});

describe("bitstream metadata", () => {
  it("keeps what the seed names and turns absent fields into null", () => {
    expect(validateBitstreamMetadata({ name: "nlb0.gbs", functionId: "3AFB", regionType: B.regionType, vendor: "intel" })).toEqual({
      name: "nlb0.gbs",
      functionId: "3AFB",
      functionName: null,
      regionType: B.regionType,
      vendor: "intel",
    });
  });
  it("refuses bad fields with their name", () => {
    expectDomainError(() => validateBitstreamMetadata({ name: "a b" }), "BAD_USER_INPUT", "name");
    expectDomainError(() => validateBitstreamMetadata({ name: "x", functionId: "3A FB" }), "BAD_USER_INPUT", "functionId");
    expectDomainError(() => validateBitstreamMetadata({ name: "x", vendor: "in tel" }), "BAD_USER_INPUT", "vendor");
    expectDomainError(() => checkChecksum("sha256:abc"), "BAD_USER_INPUT", "checksum");
    expect(checkChecksum(`sha512:${"0".repeat(128)}`)).toMatch(/^sha512:/);
  });
  it("fits a region by its region trait, with or without the vendor", () => {
    const traits = ["CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_REGION_9926AB6D_6C92_5A68_AABC_A7D84C545738"];
    expect(fitsRegion(B, traits)).toBe(true);
    expect(fitsRegion({ ...B, vendor: null }, traits)).toBe(true);
    expect(fitsRegion({ ...B, vendor: "xilinx" }, traits)).toBe(false);
    expect(fitsRegion({ ...B, regionType: null }, traits)).toBe(false);
    expect(fitsRegion(B, ["CUSTOM_FPGA_INTEL"])).toBe(false);
  });
});

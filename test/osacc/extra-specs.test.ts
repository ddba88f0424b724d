import { describe, expect, it } from "vitest";
import { BadRequest, parseExtraSpecs } from "../../src/clients/osacc/index.js";

describe("os-acc: a flavor's extra specs", () => {
  it("names a device profile as Nova does", () => {
    expect(parseExtraSpecs({ "accel:device_profile": "fpga-1", "hw:cpu_policy": "dedicated" })).toEqual({ profile: "fpga-1" });
  });
  it("groups inline keys by their group number, unnumbered keys first, and ignores other extra specs", () => {
    expect(
      parseExtraSpecs({
        "resources2:GPU": "1",
        "resources:FPGA": "2",
        "trait:CUSTOM_FAKE_DEVICE": "required",
        "accel:function_id": "3AFB",
        "resources1:CUSTOM_QAT": 1,
        "quota:disk_read_bytes_sec": "10240000",
      }),
    ).toEqual({
      groups: [{ "resources:FPGA": "2", "trait:CUSTOM_FAKE_DEVICE": "required", "accel:function_id": "3AFB" }, { "resources:CUSTOM_QAT": "1" }, { "resources:GPU": "1" }],
    });
  });
  it("refuses what asks for nothing, or is not a map of strings", () => {
    expect(() => parseExtraSpecs({ "hw:cpu_policy": "dedicated" })).toThrow(BadRequest);
    expect(() => parseExtraSpecs(["resources:FPGA"])).toThrow(/must be an object/);
    expect(() => parseExtraSpecs({ "resources:FPGA": { n: 1 } })).toThrow(expect.objectContaining({ code: "BAD_USER_INPUT", field: "extraSpecs.resources:FPGA" }));
    expect(() => parseExtraSpecs({ "accel:device_profile": "" })).toThrow(expect.objectContaining({ field: "extraSpecs.accel:device_profile" }));
  });
});

describe("os-acc: the bitstream:<uuid> extra spec of the Nova-Glance specification", () => {
  const UUID = "0a000000-0000-4000-8000-00000000000A";
  it("asks for that bitstream in its group, as accel:bitstream_id", () => {
    expect(parseExtraSpecs({ "resources:FPGA": "1", [`bitstream:${UUID}`]: "required" })).toEqual({ groups: [{ "resources:FPGA": "1", "accel:bitstream_id": UUID.toLowerCase() }] });
    expect(parseExtraSpecs({ "resources:FPGA": "1", "resources1:FPGA": "1", [`bitstream1:${UUID}`]: "" })).toEqual({
      groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "1", "accel:bitstream_id": UUID.toLowerCase() }],
    });
    expect(parseExtraSpecs({ "resources:FPGA": "1", "accel:bitstream_id": UUID.toLowerCase(), [`bitstream:${UUID}`]: "" })).toEqual({ groups: [{ "resources:FPGA": "1", "accel:bitstream_id": UUID.toLowerCase() }] });
  });
  it("refuses a bitstream that is not a uuid, two bitstreams for one group, and one beside a device profile", () => {
    expect(() => parseExtraSpecs({ "resources:FPGA": "1", "bitstream:nlb0.gbs": "" })).toThrow(expect.objectContaining({ code: "BAD_USER_INPUT", field: "extraSpecs.bitstream:nlb0.gbs" }));
    expect(() => parseExtraSpecs({ "resources:FPGA": "1", [`bitstream:${UUID}`]: "", "accel:bitstream_id": "0b000000-0000-4000-8000-00000000000b" })).toThrow(/another bitstream/);
    expect(() => parseExtraSpecs({ "accel:device_profile": "fpga-1", [`bitstream:${UUID}`]: "" })).toThrow(expect.objectContaining({ field: `extraSpecs.bitstream:${UUID}` }));
  });
});

import { describe, expect, it } from "vitest";
import { given, profileCreated, profileDeleted, T } from "./support.js";

describe("device-profiles projection", () => {
  const groups: Array<Record<string, string>> = [
    { "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required", "accel:bitstream_id": "b-1" },
    { "trait:CUSTOM_Z": "forbidden", "resources:PGPU": "2" },
  ];

  it("answers by name and by uuid, groups and their keys in the operator's order", async () => {
    const { read } = await given([profileCreated("fpga", "u-fpga", groups, T(1)), profileCreated("gpu", "u-gpu")]);
    const fpga = await read.getProfileByName("fpga");
    // The view the log's answer has too (domain/device-profiles/view.ts): the stored position orders lists, and stays inside.
    expect(fpga).toEqual({ uuid: "u-fpga", name: "fpga", description: "fpga profile", groups, createdAt: T(1), updatedAt: null, version: 1, enabled: true, inline: false });
    expect(fpga!.groups.map((g) => Object.keys(g))).toEqual([
      ["resources:FPGA", "trait:CUSTOM_FPGA_INTEL", "accel:bitstream_id"],
      ["trait:CUSTOM_Z", "resources:PGPU"],
    ]);
    expect((await read.getProfileByUuid("u-gpu"))?.name).toBe("gpu");
    expect(await read.getProfileByUuid("u-none")).toBeNull();
    expect(await read.getProfileByName("none")).toBeNull();
    expect((await read.getProfilesByName(["gpu", "x"])).map((p) => p?.uuid ?? null)).toEqual(["u-gpu", null]);
  });

  it("lists in creation order; a re-created profile appears once, at its new position", async () => {
    const { read } = await given([
      profileCreated("a", "u-a"),
      profileCreated("b", "u-b"),
      profileCreated("c", "u-c"),
      profileDeleted("a", "u-a"),
      profileCreated("a", "u-a2"),
    ]);
    expect((await read.listProfiles()).map((p) => p.name)).toEqual(["b", "c", "a"]);
    expect((await read.listProfiles(["a", "b", "zz", "a"])).map((p) => p.name)).toEqual(["b", "a"]);
    expect(await read.getProfileByUuid("u-a")).toBeNull();
    expect((await read.getProfileByUuid("u-a2"))?.name).toBe("a");
  });

  it("forgets a deleted profile", async () => {
    const { read, store } = await given([profileCreated("a", "u-a"), profileDeleted("a", "u-a")]);
    expect(await read.listProfiles()).toEqual([]);
    expect(await read.getProfileByName("a")).toBeNull();
    expect((await store.dump("device-profiles")).keys).toEqual({});
  });
});

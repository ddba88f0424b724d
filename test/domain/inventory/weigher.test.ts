import { describe, expect, it } from "vitest";
import { weighHosts, type WeighedProvider } from "../../../src/domain/inventory/weigher.js";

const rp = (resourceClass: string, total: number, used = 0, traits: string[] = [], extra: Partial<WeighedProvider> = {}): WeighedProvider => ({ resourceClass, traits, total, reserved: 0, used, ...extra });
const hosts = (entries: Record<string, WeighedProvider[]>) => new Map(Object.entries(entries));

describe("weighHosts", () => {
  it("orders by fit, then handles ready without programming, then free handles; equal hosts weigh the same", () => {
    const group = { "resources:FPGA": "1", "accel:function_id": "fa" };
    const out = weighHosts([group], hosts({
      a: [rp("FPGA", 4)],
      b: [rp("FPGA", 2, 0, ["CUSTOM_FPGA_FUNCTION_ID_INTEL_FA"])],
      c: [rp("FPGA", 4)],
      d: [rp("FPGA", 8, 8)],
    }));
    expect(out.map((h) => [h.hostname, h.weight, h.ready, h.free])).toEqual([
      ["b", 1, 2, 2],
      ["a", 0.5, 0, 4],
      ["c", 0.5, 0, 4],
      ["d", 0, 0, 0],
    ]);
    expect(out[3]!.reason).toBe("no provider on d has 1 free FPGA(s) for group 0");
  });

  it("counts only providers of the group's class, with its required traits and none of its forbidden ones; reserved handles are not free", () => {
    const group = { "resources:PGPU": "1", "trait:CUSTOM_A100": "required", "trait:CUSTOM_MIG": "forbidden" };
    const out = weighHosts([group], hosts({
      gpu: [rp("PGPU", 2, 0, ["CUSTOM_A100"]), rp("PGPU", 5, 0, ["CUSTOM_A100", "CUSTOM_MIG"]), rp("FPGA", 9, 0, ["CUSTOM_A100"])],
      t4: [rp("PGPU", 8, 0, ["CUSTOM_T4"])],
      held: [rp("PGPU", 3, 0, ["CUSTOM_A100"], { reserved: 3 })],
    }));
    expect(out.map((h) => [h.hostname, h.fits, h.free])).toEqual([
      ["gpu", true, 2],
      ["held", false, 0],
      ["t4", false, 0],
    ]);
  });

  it("a group's amount must fit on one provider; every group must fit; a bitstream need is met by the region running it", () => {
    const out = weighHosts([{ "resources:FPGA": "2", "accel:bitstream_id": "b1" }, { "resources:PGPU": "1" }], hosts({
      split: [rp("FPGA", 1), rp("FPGA", 1), rp("PGPU", 1)],
      whole: [rp("FPGA", 2, 0, [], { bitstreamId: "b1" }), rp("PGPU", 1)],
      nogpu: [rp("FPGA", 2)],
    }));
    expect(out.map((h) => [h.hostname, h.fits, h.ready])).toEqual([
      ["whole", true, 3],
      ["split", false, 1],
      ["nogpu", false, 0],
    ]);
    expect(out.find((h) => h.hostname === "nogpu")!.reason).toBe("no provider on nogpu has 1 free PGPU(s) for group 1");
  });

  it("a group that names its function or bitstream by name counts no handle as ready (the catalogue alone knows the name)", () => {
    const out = weighHosts([{ "resources:FPGA": "1", "accel:function_name": "nlb0" }], hosts({ a: [rp("FPGA", 3, 0, ["CUSTOM_FPGA_FUNCTION_ID_INTEL_NLB0"])] }));
    expect(out[0]).toMatchObject({ fits: true, free: 3, ready: 0 });
  });
});

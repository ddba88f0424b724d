import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  parseComputeInstances,
  parseCreatedGpuInstance,
  parseGiPlacements,
  parseGiProfiles,
  parseGpuInstances,
  parseListGpus,
  parseMigQuery,
} from "../../../src/clients/agent/drivers/nvidia-mig-parse.js";
import { FIXTURES } from "./fixture-env.js";

const fixture = (name: string) => readFileSync(`${FIXTURES}gpu-mig/${name}`, "utf8");

describe("nvidia-smi MIG listings", () => {
  it("reads -lgip: one entry per GPU-instance profile, the engine line under it skipped", () => {
    const profiles = parseGiProfiles(fixture("mig-lgip.txt"));
    expect(profiles.map((p) => [p.name, p.id, p.total])).toEqual([
      ["1g.10gb", 19, 7],
      ["1g.10gb+me", 20, 1],
      ["1g.20gb", 15, 4],
      ["2g.20gb", 14, 3],
      ["3g.40gb", 9, 2],
      ["4g.40gb", 5, 1],
      ["7g.80gb", 0, 1],
    ]);
    expect(profiles.at(-1)).toEqual({ gpu: 0, name: "7g.80gb", id: 0, free: 1, total: 1, memoryGiB: 79.25, sm: 132 });
  });

  it("reads -lgipp, the singular 'Placement :' of a profile with one start included", () => {
    const placements = parseGiPlacements(fixture("mig-lgipp.txt"));
    expect(placements).toHaveLength(7);
    expect(placements[2]).toEqual({ gpu: 0, profileId: 15, starts: [0, 2, 4, 6], size: 2 });
    expect(placements[6]).toEqual({ gpu: 0, profileId: 0, starts: [0], size: 8 });
  });

  it("reads -lgi and -lci rows", () => {
    expect(parseGpuInstances(fixture("created/mig-lgi.txt"))).toEqual([
      { gpu: 0, name: "1g.10gb", profileId: 19, id: 7, start: 0, size: 1 },
      { gpu: 0, name: "3g.40gb", profileId: 9, id: 1, start: 4, size: 4 },
    ]);
    expect(parseComputeInstances(fixture("created/mig-lci.txt"))).toEqual([
      { gpu: 0, gpuInstanceId: 1, name: "3g.40gb", profileId: 2, id: 0 },
      { gpu: 0, gpuInstanceId: 7, name: "1g.10gb", profileId: 0, id: 0 },
    ]);
  });

  it("takes nvidia-smi's 'No GPU instances found' for an empty listing", () => {
    expect(parseGpuInstances("No GPU instances found: Not Found\n")).toEqual([]);
    expect(parseComputeInstances("No compute instances found: Not Found\n")).toEqual([]);
  });

  it("refuses a table row it cannot read rather than skipping it", () => {
    expect(() => parseGpuInstances("|   0  MIG 3g.40gb       9        1          4-4     |")).toThrow(/unreadable row/);
    expect(() => parseGiProfiles("|   0  MIG 1g.10gb       19     seven        9.75       No     16     1     0   |")).toThrow(/unreadable profile row/);
    expect(() => parseGiPlacements("GPU  0 Profile ID 19 Placements: 0-6")).toThrow(/unreadable line/);
  });

  it("reads -L: each GPU's UUID and its MIG devices by number", () => {
    const gpus = parseListGpus(fixture("created/nvidia-smi-L.txt"));
    expect(gpus.map((g) => [g.index, g.uuid, [...g.migDevices]])).toEqual([
      [
        0,
        "GPU-c08d91cb-e324-655c-71ba-7570956445bc",
        [
          [0, { profile: "3g.40gb", uuid: "MIG-c788539f-c1ea-5a36-8b4d-9b07d024b1bb" }],
          [1, { profile: "1g.10gb", uuid: "MIG-b4b2228d-6933-5839-bc0e-41ab9edb61c6" }],
        ],
      ],
      [1, "GPU-27196ced-a067-4406-2159-46448710fc9c", []],
    ]);
  });

  it("reads -q -x: MIG mode and which instances each MIG device is, by PCI address", () => {
    const query = parseMigQuery(fixture("nvidia-smi-q-x.xml"));
    expect(query.get("0000:06:00.0")).toEqual({
      uuid: "GPU-c08d91cb-e324-655c-71ba-7570956445bc",
      migEnabled: true,
      devices: [{ index: 0, gpuInstanceId: 1, computeInstanceId: 0 }],
    });
    expect(query.get("0000:0c:00.0")).toEqual({ uuid: "GPU-27196ced-a067-4406-2159-46448710fc9c", migEnabled: false, devices: [] });
  });

  it("reads which GPU instance -cgi made", () => {
    expect(parseCreatedGpuInstance(fixture("created/mig-cgi.txt"))).toBe(7);
    expect(parseCreatedGpuInstance("Unable to create a GPU instance on GPU  0 using profile 9: Insufficient Resources")).toBeNull();
  });

  describe("as NVIDIA's MIG User Guide prints them for A100 40GB", () => {
    it("reads a 3-2-1-1 geometry's -lgi", () => {
      expect(parseGpuInstances(fixture("a100-40gb/mig-lgi.txt")).map((g) => [g.name, g.profileId, g.id, `${g.start}:${g.size}`])).toEqual([
        ["1g.5gb", 19, 7, "0:1"],
        ["1g.5gb", 19, 8, "1:1"],
        ["2g.10gb", 14, 4, "2:2"],
        ["3g.20gb", 9, 2, "4:4"],
      ]);
    });

    it("reads three compute instances in one GPU instance from -lci", () => {
      expect(parseComputeInstances(fixture("a100-40gb/mig-lci.txt"))).toEqual([0, 1, 2].map((id) => ({ gpu: 0, gpuInstanceId: 1, name: "1c.3g.20gb", profileId: 0, id })));
    });

    it("reads an eight-GPU -L, compute-instance profiles included", () => {
      const gpus = parseListGpus(fixture("a100-40gb/nvidia-smi-L.txt"));
      expect(gpus.map((g) => g.migDevices.size)).toEqual([7, 3, 2, 1, 6, 1, 3, 3]);
      expect(gpus[6]!.migDevices.get(2)).toEqual({ profile: "3c.7g.40gb", uuid: "MIG-8abf68e0-2808-525e-9133-ba81701ed6d3" });
      expect(gpus[7]!.uuid).toBe("GPU-95fac899-e21a-0e44-b0fc-e4e3bf106feb");
    });

    it("reads the instance a -cgi made before it failed", () => {
      expect(parseCreatedGpuInstance(fixture("a100-40gb/mig-cgi-fails.txt"))).toBe(13);
    });
  });
});

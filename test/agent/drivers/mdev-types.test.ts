import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { maxInstanceOf, mdevPartitioner, readMdevPartitioning } from "../../../src/clients/agent/drivers/mdev-types.js";
import { FIXTURES, fixtureEnv, pci } from "./fixture-env.js";

const MADE = "6f0a3c1e-2b4d-4e8f-9a1b-0c2d3e4f5a6b";
const NEW = "0b9e2c4a-8f1d-4c3b-a2e5-7d6f8a9b0c1d";
const T4 = "0000:3b:00.0";
const TYPES = `bus/pci/devices/${T4}/mdev_supported_types`;
const OPTIONS = { resourceClass: "VGPU", oneProfileAtATime: true };

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "mdev-"));
  await cp(`${FIXTURES}mdev-host/sys`, root, { recursive: true });
});
afterEach(() => rm(root, { recursive: true, force: true }));

const env = () => fixtureEnv("mdev-host", { sysfsRoot: root });

describe("mdev types as partitioning", () => {
  it("reads the description's max_instance", () => {
    expect(maxInstanceOf("num_heads=4, frl_config=45, framebuffer=2048M, max_resolution=5120x2880, max_instance=8")).toBe(8);
    expect(maxInstanceOf("num_heads=4")).toBeNull();
    expect(maxInstanceOf(null)).toBeNull();
  });

  it("lists each type as a profile and each made mdev as a partition", async () => {
    const p = await readMdevPartitioning(env(), T4, OPTIONS);
    expect(p).toEqual({
      counters: [],
      slots: 0,
      oneProfileAtATime: true,
      profiles: [
        { name: "nvidia-222", toolId: "nvidia-222", resourceClass: "VGPU", consumes: [], placements: [], maxInstances: 8 },
        { name: "nvidia-223", toolId: "nvidia-223", resourceClass: "VGPU", consumes: [], placements: [], maxInstances: 8 },
      ],
      partitions: [
        {
          profile: "nvidia-223",
          uuid: MADE,
          placement: null,
          toolRef: { mdevType: "nvidia-223" },
          attachHandle: { type: "MDEV", info: { asked_type: "nvidia-223", ...pci(T4), mdev_uuid: MADE } },
        },
      ],
    });
  });

  it("counts available plus made instances when the description gives no max_instance", async () => {
    await cp(join(root, TYPES, "nvidia-223/name"), join(root, TYPES, "nvidia-223/description"));
    const p = await readMdevPartitioning(env(), T4, OPTIONS);
    expect(p!.profiles.find((t) => t.name === "nvidia-223")!.maxInstances).toBe(7 + 1);
  });

  it("reports no partitioning for a function without mdev types", async () => {
    expect(await readMdevPartitioning(env(), "0000:86:00.0", OPTIONS)).toBeNull();
  });
});

describe("mdev partitioner", () => {
  const partitioner = mdevPartitioner(["NVIDIA"], () => NEW);
  const controlPath = pci(T4);

  it("writes a new UUID to the type's create file and answers the mdev", async () => {
    const made = await partitioner.create(env(), { controlPath, profile: { name: "nvidia-223", toolId: "nvidia-223" }, placement: null });
    const path = join(root, TYPES, "nvidia-223/create");
    expect(made.command).toEqual(["write", path, NEW]);
    expect(await readFile(path, "utf8")).toBe(NEW);
    expect(made.partition).toEqual({
      profile: "nvidia-223",
      uuid: NEW,
      placement: null,
      toolRef: { mdevType: "nvidia-223" },
      attachHandle: { type: "MDEV", info: { asked_type: "nvidia-223", ...pci(T4), mdev_uuid: NEW } },
    });
  });

  it("refuses a type the device does not offer, writing nothing", async () => {
    await expect(
      partitioner.create(env(), { controlPath, profile: { name: "nvidia-999", toolId: "nvidia-999" }, placement: null }),
    ).rejects.toThrow(/0000:3b:00.0 offers no mdev type nvidia-999/);
  });

  it("surfaces the kernel's refusal of a write", async () => {
    await rm(join(root, TYPES, "nvidia-222"), { recursive: true });
    await cp(join(root, TYPES, "nvidia-223"), join(root, TYPES, "nvidia-222"), { recursive: true });
    await rm(join(root, TYPES, "nvidia-222/create"));
    await cp(join(root, TYPES, "nvidia-223/devices"), join(root, TYPES, "nvidia-222/create"), { recursive: true });
    await expect(
      partitioner.create(env(), { controlPath, profile: { name: "nvidia-222", toolId: "nvidia-222" }, placement: null }),
    ).rejects.toThrow(/writing 0b9e2c4a-.* to .*nvidia-222\/create failed: EISDIR/);
  });

  it("removes an mdev through bus/mdev/devices/<uuid>/remove", async () => {
    const gone = await partitioner.destroy(env(), { controlPath, uuid: MADE, toolRef: { mdevType: "nvidia-223" } });
    const path = join(root, "bus/mdev/devices", MADE, "remove");
    expect(gone.command).toEqual(["write", path, "1"]);
    expect(await readFile(path, "utf8")).toBe("1");
  });

  it("treats an mdev that is already gone as removed", async () => {
    const gone = await partitioner.destroy(env(), { controlPath, uuid: NEW, toolRef: { mdevType: "nvidia-223" } });
    expect(gone.command).toEqual([]);
  });
});

import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { driverEnv } from "../../../src/clients/agent/driver-env.js";
import type { NvidiaGpuConfig } from "../../../src/clients/agent/drivers/driver.js";
import { readMdevPartitioning } from "../../../src/clients/agent/drivers/mdev-types.js";
import { nvidiaGpuDriver } from "../../../src/clients/agent/drivers/nvidia-gpu.js";
import { nvidiaPartitioner } from "../../../src/clients/agent/drivers/nvidia-partitioner.js";
import { validatePartitioning } from "../../../src/domain/inventory/partitioning-validation.js";
import { validateReport } from "../../../src/domain/inventory/report-validation.js";
import { FIXTURES, fixtureEnv, pci } from "./fixture-env.js";

const T4 = "0000:3b:00.0";
const T4_LINE = "0000:3b:00.0 3D controller [0302]: NVIDIA Corporation TU104GL [Tesla T4] [10de:1eb8] (rev a1)\n";
const TYPES = `bus/pci/devices/${T4}/mdev_supported_types`;

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "vgpu-"));
  await cp(`${FIXTURES}mdev-host/sys`, root, { recursive: true });
});
afterEach(() => rm(root, { recursive: true, force: true }));

const env = (nvidia: NvidiaGpuConfig) => fixtureEnv("mdev-host", { sysfsRoot: root, lspci: async () => T4_LINE, config: { nvidia } });
const discoverT4 = async (nvidia: NvidiaGpuConfig) => (await nvidiaGpuDriver.discover(env(nvidia)))[0]!;

describe("nvidia-gpu driver with vGPU types made on demand", () => {
  it("reports the GPU's mdev types and mdevs as partitioning, and no deployable of its own", async () => {
    const gpu = await discoverT4({ onDemandMdevs: true });
    const sysfs = await readMdevPartitioning(env({}), T4, { resourceClass: "VGPU", oneProfileAtATime: true });
    expect(gpu.deployables).toEqual([]);
    expect(gpu.controlPath).toEqual({ type: "PCI", info: pci(T4) });
    const profiles = sysfs!.profiles.map((p) => ({ ...p, resourceClass: `CUSTOM_VGPU_${p.name.toUpperCase().replace("-", "_")}` }));
    expect(gpu.partitioning).toEqual({ ...sysfs, driverName: "NVIDIA_VGPU", profiles });
    expect(gpu.partitioning!.profiles.map((p) => [p.name, p.resourceClass])).toEqual([
      ["nvidia-222", "CUSTOM_VGPU_NVIDIA_222"],
      ["nvidia-223", "CUSTOM_VGPU_NVIDIA_223"],
    ]);
    expect(validatePartitioning(gpu.partitioning, "partitioning")).toEqual(gpu.partitioning);
    expect(validateReport([gpu])[0]!.partitioning!.partitions.map((p) => p.attachHandle.type)).toEqual(["MDEV"]);
  });

  it("offers only the enabled types, and keeps a type whose mdevs exist", async () => {
    expect((await discoverT4({ onDemandMdevs: true, enabledVgpuTypes: ["nvidia-223"] })).partitioning!.profiles.map((p) => p.name)).toEqual(["nvidia-223"]);
    const elsewhere = await discoverT4({ onDemandMdevs: true, enabledVgpuTypes: ["nvidia-222"], vgpuDeviceAddresses: { "nvidia-222": ["0000:af:00.0"] } });
    expect(elsewhere.partitioning!.profiles.map((p) => p.name)).toEqual(["nvidia-223"]);
    expect(elsewhere.partitioning!.partitions.map((p) => p.profile)).toEqual(["nvidia-223"]);
  });

  it("is off by default: the GPU is reported as before", async () => {
    const gpu = await discoverT4({});
    expect(gpu.partitioning).toBeUndefined();
    expect(gpu.deployables[0]!.attachHandles).toEqual([{ type: "PCI", info: pci(T4) }]);
    const fixed = await discoverT4({ enabledVgpuTypes: ["nvidia-223"] });
    expect(fixed.partitioning).toBeUndefined();
    expect(fixed.deployables[0]!.attachHandles.every((h) => h.type === "MDEV")).toBe(true);
  });

  it("makes an mdev of a type through the driver's partitioner", async () => {
    const made = await nvidiaPartitioner.create(env({ onDemandMdevs: true }), { controlPath: pci(T4), profile: { name: "nvidia-223", toolId: "nvidia-223" }, placement: null });
    const path = join(root, TYPES, "nvidia-223/create");
    expect(made.command).toEqual(["write", path, made.partition.uuid]);
    expect(await readFile(path, "utf8")).toBe(made.partition.uuid);
    expect(made.partition.attachHandle.type).toBe("MDEV");
  });

  it("is the agent's --vgpu-on-demand, beside the MIG state the agent reads with its nvidia-smi", () => {
    const options = { hostname: "h1", drivers: "nvidia-gpu", sysfsRoot: "/sys", lspci: "lspci", pciWhitelist: "[]", nvidiaSkipVfs: false, vgpuTypes: "" };
    expect(driverEnv({ ...options, vgpuOnDemand: true }).config.nvidia?.onDemandMdevs).toBe(true);
    expect(driverEnv(options).config.nvidia?.onDemandMdevs).toBeUndefined();
    expect(typeof driverEnv(options).mig?.nvidiaSmiQuery).toBe("function");
  });
});

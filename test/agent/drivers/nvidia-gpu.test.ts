import { describe, expect, it } from "vitest";
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import { nvidiaGpuDriver } from "../../../src/clients/agent/drivers/nvidia-gpu.js";
import { fixtureEnv, pci } from "./fixture-env.js";

const byAddress = (devices: DriverDevice[]) => new Map(devices.map((d) => [`${d.controlPath.info.bus}:${d.controlPath.info.device}.${d.controlPath.info.function}`, d]));

const T4_VGPU = { enabledVgpuTypes: ["nvidia-223", "nvidia-472"], vgpuDeviceAddresses: { "nvidia-223": ["0000:3b:00.0"] } };

describe("nvidia-gpu driver on the mixed host", () => {
  it("reports every NVIDIA GPU function as a pGPU by default, VFs included, and nothing else", async () => {
    const env = fixtureEnv("mixed-host");
    const devices = await nvidiaGpuDriver.discover(env);
    expect(devices.map((d) => d.deployables[0]!.name)).toEqual([
      "compute1_0000:3b:00.0",
      "compute1_0000:86:00.0",
      "compute1_0000:af:00.0",
      "compute1_0000:af:00.4",
      "compute1_0000:af:00.5",
    ]);
    expect(env.warnings).toEqual([]);
  });

  it("describes a pGPU as Cyborg does", async () => {
    const t4 = byAddress(await nvidiaGpuDriver.discover(fixtureEnv("mixed-host"))).get("86:00.0")!;
    expect(t4).toEqual({
      type: "GPU",
      vendor: "10de",
      model: "NVIDIA Corporation TU104GL [Tesla T4]",
      stdBoardInfo: { product_id: "1eb8", controller: "3D controller" },
      vendorBoardInfo: { vendor_info: "gpu_vb_info" },
      controlPath: { type: "PCI", info: pci("0000:86:00.0") },
      stub: false,
      deployables: [
        {
          name: "compute1_0000:86:00.0",
          numAccelerators: 1,
          driverName: "NVIDIA",
          attributes: [
            { key: "rc", value: "PGPU" },
            { key: "trait0", value: "OWNER_CYBORG" },
            { key: "trait1", value: "CUSTOM_GPU_NVIDIA" },
            { key: "trait2", value: "CUSTOM_GPU_NVIDIA_1EB8" },
          ],
          attachHandles: [{ type: "PCI", info: pci("0000:86:00.0") }],
        },
      ],
    });
  });

  it("turns a GPU configured for a vGPU type into available + created MDEV handles", async () => {
    const env = fixtureEnv("mixed-host", { config: { nvidia: T4_VGPU } });
    const t4 = byAddress(await nvidiaGpuDriver.discover(env)).get("3b:00.0")!;
    const dep = t4.deployables[0]!;
    expect(dep.name).toBe("compute1_0000:3b:00.0");
    expect(dep.numAccelerators).toBe(8); // 7 available + 1 already created
    expect(dep.attributes).toEqual([
      { key: "rc", value: "VGPU" },
      { key: "trait0", value: "OWNER_CYBORG" },
      { key: "trait1", value: "CUSTOM_GPU_NVIDIA" },
      { key: "trait2", value: "CUSTOM_GPU_NVIDIA_1EB8_T4_2B" },
    ]);
    expect(dep.attachHandles).toHaveLength(8);
    expect(dep.attachHandles[0]).toEqual({
      type: "MDEV",
      info: { asked_type: "nvidia-223", ...pci("0000:3b:00.0"), vgpu_mark: "nvidia-223_0" },
    });
    expect(dep.attachHandles.map((h) => h.info.vgpu_mark)).toEqual(Array.from({ length: 8 }, (_, n) => `nvidia-223_${n}`));
    expect(t4.controlPath).toEqual({ type: "PCI", info: pci("0000:3b:00.0") });
  });

  it("leaves GPUs the type is not configured for as pGPUs", async () => {
    const devices = byAddress(await nvidiaGpuDriver.discover(fixtureEnv("mixed-host", { config: { nvidia: T4_VGPU } })));
    expect(devices.get("86:00.0")!.deployables[0]!.attributes[0]).toEqual({ key: "rc", value: "PGPU" });
    expect(devices.get("af:00.0")!.deployables[0]!.attributes[0]).toEqual({ key: "rc", value: "PGPU" });
  });

  it("applies a type without configured addresses to every GPU that offers it (the A100 VFs)", async () => {
    const devices = byAddress(await nvidiaGpuDriver.discover(fixtureEnv("mixed-host", { config: { nvidia: T4_VGPU } })));
    for (const vf of ["af:00.4", "af:00.5"]) {
      const dep = devices.get(vf)!.deployables[0]!;
      expect(dep.numAccelerators).toBe(1); // 1 available, or 0 available + 1 created
      expect(dep.attributes.map((a) => a.value)).toEqual(["VGPU", "OWNER_CYBORG", "CUSTOM_GPU_NVIDIA", "CUSTOM_GPU_NVIDIA_20B0_A100_4C"]);
      expect(dep.attachHandles).toEqual([{ type: "MDEV", info: { asked_type: "nvidia-472", ...pci(`0000:${vf}`), vgpu_mark: "nvidia-472_0" } }]);
    }
  });

  it("picks the first enabled type a GPU offers", async () => {
    const env = fixtureEnv("mixed-host", { config: { nvidia: { enabledVgpuTypes: ["nvidia-999", "nvidia-222", "nvidia-223"] } } });
    const dep = byAddress(await nvidiaGpuDriver.discover(env)).get("86:00.0")!.deployables[0]!;
    expect(dep.numAccelerators).toBe(16);
    expect(dep.attributes[3]).toEqual({ key: "trait2", value: "CUSTOM_GPU_NVIDIA_1EB8_T4_1B" });
  });

  it("skips SR-IOV virtual functions when asked to", async () => {
    const env = fixtureEnv("mixed-host", { config: { nvidia: { skipVirtualFunctions: true } } });
    const names = (await nvidiaGpuDriver.discover(env)).map((d) => d.deployables[0]!.name);
    expect(names).toEqual(["compute1_0000:3b:00.0", "compute1_0000:86:00.0", "compute1_0000:af:00.0"]);
  });

  it("skips, with a warning, a GPU configured for a type it does not offer", async () => {
    const env = fixtureEnv("mixed-host", { config: { nvidia: { enabledVgpuTypes: ["nvidia-472"], vgpuDeviceAddresses: { "nvidia-472": ["0000:86:00.0"] } } } });
    const names = (await nvidiaGpuDriver.discover(env)).map((d) => d.deployables[0]!.name);
    expect(names).not.toContain("compute1_0000:86:00.0");
    expect(names).toHaveLength(4);
    expect(env.warnings).toEqual([
      { fields: { address: "0000:86:00.0", err: "vGPU type nvidia-472 is configured for 0000:86:00.0 but not offered by it" }, msg: "GPU skipped" },
    ]);
  });

  it("does not report, and warns about, a GPU whose vGPU type has no capacity", async () => {
    // nvidia-223 is in use on 3b:00.0, so the GPU offers no nvidia-222 instance.
    const env = fixtureEnv("mixed-host", { config: { nvidia: { enabledVgpuTypes: ["nvidia-222"] } } });
    const devices = byAddress(await nvidiaGpuDriver.discover(env));
    expect(devices.has("3b:00.0")).toBe(false);
    expect(devices.get("86:00.0")!.deployables[0]!.numAccelerators).toBe(16);
    expect(env.warnings).toEqual([
      { fields: { address: "0000:3b:00.0", vgpuType: "nvidia-222" }, msg: "vGPU type has no instances; GPU not reported" },
    ]);
  });
});

describe("nvidia-gpu driver on other hosts", () => {
  it("finds nothing on a host without NVIDIA GPUs (the ASPEED VGA is not one)", async () => {
    expect(await nvidiaGpuDriver.discover(fixtureEnv("no-accelerators"))).toEqual([]);
  });

  it("skips malformed lines and a GPU whose vGPU sysfs is unreadable, and reports the rest", async () => {
    const env = fixtureEnv("malformed", { config: { nvidia: { enabledVgpuTypes: ["nvidia-223"] } } });
    const devices = await nvidiaGpuDriver.discover(env);
    expect(devices.map((d) => [d.deployables[0]!.name, d.model, d.deployables[0]!.attributes[0]!.value])).toEqual([
      ["compute1_0000:3b:00.0", "NVIDIA Corporation TU104GL [Tesla T4]", "PGPU"],
      ["compute1_0000:af:00.0", "NVIDIA Corporation GV100GL [Tesla V100 PCIe 32GB]", "PGPU"],
    ]);
    expect(devices[1]!.stdBoardInfo).toEqual({ product_id: "1db6", controller: "VGA compatible controller" });
    expect(env.warnings.map((w) => w.msg)).toEqual(["skipped a malformed lspci line", "skipped a malformed lspci line", "GPU skipped"]);
    expect(env.warnings[2]!.fields).toEqual({ address: "0000:86:00.0", err: 'nvidia-223: available_instances is "garbage", not a count' });
  });
});

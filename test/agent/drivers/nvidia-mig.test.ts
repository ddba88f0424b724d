import { describe, expect, it } from "vitest";
import { withHealth } from "../../../src/clients/agent/drivers/health/index.js";
import { nvidiaGpuDriver } from "../../../src/clients/agent/drivers/nvidia-gpu.js";
import { migResourceClass } from "../../../src/clients/agent/drivers/nvidia-mig.js";
import { withPartitionDeployables } from "../../../src/domain/inventory/partition-deployables.js";
import { validatePartitioning } from "../../../src/domain/inventory/partitioning-validation.js";
import { validateReport } from "../../../src/domain/inventory/report-validation.js";
import { migHost } from "./mig-host.js";
import { pci } from "./fixture-env.js";

const H100 = "0000:06:00.0";
const WHOLE = "0000:0c:00.0";
const GI1_UUID = "MIG-c788539f-c1ea-5a36-8b4d-9b07d024b1bb";

const one = (n: number) => Array.from({ length: n }, (_, start) => ({ start, size: 1 }));

const H100_PARTITIONING = {
  driverName: "NVIDIA_MIG",
  counters: [{ name: "compute", total: 7 }],
  slots: 8,
  oneProfileAtATime: false,
  profiles: [
    { name: "1g.10gb", toolId: "19", resourceClass: "CUSTOM_MIG_1G_10GB", consumes: [{ counter: "compute", amount: 1 }], placements: one(7), maxInstances: 7 },
    { name: "1g.10gb+me", toolId: "20", resourceClass: "CUSTOM_MIG_1G_10GB_ME", consumes: [{ counter: "compute", amount: 1 }], placements: one(7), maxInstances: 1 },
    { name: "1g.20gb", toolId: "15", resourceClass: "CUSTOM_MIG_1G_20GB", consumes: [{ counter: "compute", amount: 1 }], placements: [0, 2, 4, 6].map((start) => ({ start, size: 2 })), maxInstances: 4 },
    { name: "2g.20gb", toolId: "14", resourceClass: "CUSTOM_MIG_2G_20GB", consumes: [{ counter: "compute", amount: 2 }], placements: [0, 2, 4].map((start) => ({ start, size: 2 })), maxInstances: 3 },
    { name: "3g.40gb", toolId: "9", resourceClass: "CUSTOM_MIG_3G_40GB", consumes: [{ counter: "compute", amount: 3 }], placements: [0, 4].map((start) => ({ start, size: 4 })), maxInstances: 2 },
    { name: "4g.40gb", toolId: "5", resourceClass: "CUSTOM_MIG_4G_40GB", consumes: [{ counter: "compute", amount: 4 }], placements: [{ start: 0, size: 4 }], maxInstances: 1 },
    { name: "7g.80gb", toolId: "0", resourceClass: "CUSTOM_MIG_7G_80GB", consumes: [{ counter: "compute", amount: 7 }], placements: [{ start: 0, size: 8 }], maxInstances: 1 },
  ],
  partitions: [
    {
      profile: "3g.40gb",
      uuid: GI1_UUID,
      placement: { start: 4, size: 4 },
      toolRef: { gpu: 0, gpuInstanceId: 1, computeInstanceId: 0 },
      attachHandle: { type: "MIG", info: { uuid: GI1_UUID, gpu_bdf: H100, gpu_instance_id: 1, compute_instance_id: 0 } },
    },
  ],
};

const byBdf = (devices: Awaited<ReturnType<typeof nvidiaGpuDriver.discover>>) =>
  new Map(devices.map((d) => [`${d.controlPath.info.domain}:${d.controlPath.info.bus}:${d.controlPath.info.device}.${d.controlPath.info.function}`, d]));

describe("nvidia-gpu driver with a GPU in MIG mode", () => {
  it("reports the MIG GPU's partitioning and no deployable of its own", async () => {
    const host = migHost();
    const gpu = byBdf(await nvidiaGpuDriver.discover(host.env)).get(H100)!;
    expect(gpu.deployables).toEqual([]);
    expect(gpu.controlPath).toEqual({ type: "PCI", info: pci(H100) });
    expect(gpu.partitioning).toEqual(H100_PARTITIONING);
    expect(host.env.warnings).toEqual([]);
  });

  it("reports partitioning the service accepts", async () => {
    const gpu = byBdf(await nvidiaGpuDriver.discover(migHost().env)).get(H100)!;
    expect(validatePartitioning(gpu.partitioning, "partitioning")).toEqual(H100_PARTITIONING);
  });

  it("reports what the service takes: one provider per profile, the instance as its profile's handle", async () => {
    const devices = validateReport(await nvidiaGpuDriver.discover(migHost().env));
    const tree = withPartitionDeployables("compute1", devices).find((d) => d.partitioning)!;
    expect(tree.deployables.map((d) => [d.name, d.numAccelerators, d.handles.length])).toEqual([
      ["compute1_0000:06:00.0_1g.10gb", 7, 0],
      ["compute1_0000:06:00.0_1g.10gb+me", 1, 0],
      ["compute1_0000:06:00.0_1g.20gb", 4, 0],
      ["compute1_0000:06:00.0_2g.20gb", 3, 0],
      ["compute1_0000:06:00.0_3g.40gb", 2, 1],
      ["compute1_0000:06:00.0_4g.40gb", 1, 0],
      ["compute1_0000:06:00.0_7g.80gb", 1, 0],
    ]);
    expect(tree.deployables[4]!.handles[0]).toMatchObject({ type: "MIG", info: { uuid: GI1_UUID, gpu_instance_id: 1 } });
  });

  it("reports a GPU that is not in MIG mode exactly as before", async () => {
    const host = migHost();
    const withMig = byBdf(await nvidiaGpuDriver.discover(host.env)).get(WHOLE)!;
    const without = byBdf(await nvidiaGpuDriver.discover(migHost({ mig: undefined }).env)).get(WHOLE)!;
    expect(withMig).toEqual(without);
    expect(withMig.partitioning).toBeUndefined();
    expect(withMig.deployables[0]!.attachHandles).toEqual([{ type: "PCI", info: pci(WHOLE) }]);
  });

  it("reads no MIG state without a source, and runs nothing", async () => {
    const host = migHost({ mig: undefined });
    const devices = await nvidiaGpuDriver.discover(host.env);
    expect(devices.map((d) => d.partitioning)).toEqual([undefined, undefined]);
    expect(host.calls).toEqual([]);
  });

  it("takes a host without nvidia-smi as one without MIG", async () => {
    const host = migHost({ mig: { nvidiaSmiQuery: () => Promise.reject(new Error("nvidia-smi not found: install the NVIDIA driver's utilities")) } });
    const devices = await nvidiaGpuDriver.discover(host.env);
    expect(devices.map((d) => d.deployables.length)).toEqual([1, 1]);
    expect(host.calls).toEqual([]);
  });

  it("asks nvidia-smi mig only about the GPU in MIG mode, once a pass", async () => {
    const host = migHost();
    await nvidiaGpuDriver.discover(host.env);
    expect(host.calls.map((c) => c.slice(1).join(" "))).toEqual(["-L", "mig -i 0 -lgip", "mig -i 0 -lgipp", "mig -i 0 -lgi", "mig -i 0 -lci"]);
  });

  it("runs no MIG listing when no GPU is in MIG mode", async () => {
    const host = migHost({ mig: { nvidiaSmiQuery: async () => '<gpu id="00000000:06:00.0"><mig_mode><current_mig>Disabled</current_mig></mig_mode></gpu>' } });
    await nvidiaGpuDriver.discover(host.env);
    expect(host.calls).toEqual([]);
  });

  it("fails the pass when nvidia-smi -q -x cannot be read: which GPUs are whole is then unknown", async () => {
    const host = migHost({ mig: { nvidiaSmiQuery: () => Promise.reject(new Error("nvidia-smi -q -x timed out")) } });
    await expect(nvidiaGpuDriver.discover(host.env)).rejects.toThrow(/timed out/);
  });

  it("skips only the MIG GPU, with a warning, when the MIG listings cannot be read", async () => {
    const host = migHost();
    host.answers["mig -i 0 -lgip"] = () => {
      throw new Error("nvidia-smi mig -i 0 -lgip failed (exit 4): Insufficient Permissions");
    };
    const devices = byBdf(await nvidiaGpuDriver.discover(host.env));
    expect([...devices.keys()]).toEqual([WHOLE]);
    expect(host.env.warnings).toEqual([
      { fields: { address: H100, err: expect.stringMatching(/MIG mode, but its MIG state cannot be read: .*Insufficient Permissions/) }, msg: "GPU skipped" },
    ]);
  });

  it("leaves out, with a warning, a GPU instance without a compute instance", async () => {
    const host = migHost();
    host.answers["mig -i 0 -lci"] = () => {
      throw new Error("nvidia-smi mig -i 0 -lci failed (exit 6): No compute instances found: Not Found");
    };
    const gpu = byBdf(await nvidiaGpuDriver.discover(host.env)).get(H100)!;
    expect(gpu.partitioning!.partitions).toEqual([]);
    expect(host.env.warnings).toEqual([
      { fields: { address: H100, gpuInstanceId: 1, err: expect.stringMatching(/has no compute instance.*nvidia-smi mig -i 0 -gi 1 -cci/) }, msg: "MIG GPU instance left out of the report" },
    ]);
  });

  it("reads a MIG GPU's health from nvidia-smi as a whole GPU's", async () => {
    const host = migHost({ health: { nvidiaSmi: async () => `Unable to determine the device handle for GPU${H100}: Unknown Error\n` } });
    const devices = await withHealth(await nvidiaGpuDriver.discover(host.env), host.env);
    expect(byBdf(devices).get(H100)!.health).toMatchObject({ status: "CRITICAL", reasons: expect.arrayContaining([expect.objectContaining({ code: "GPU_LOST" })]) });
  });

  it("names resource classes after the profile", () => {
    expect(migResourceClass("1g.10gb")).toBe("CUSTOM_MIG_1G_10GB");
    expect(migResourceClass("1g.10gb+me")).toBe("CUSTOM_MIG_1G_10GB_ME");
  });
});

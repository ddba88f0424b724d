import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nvidiaGpuDriver } from "../../../src/clients/agent/drivers/nvidia-gpu.js";
import { migPartitioner } from "../../../src/clients/agent/drivers/nvidia-mig-partitioner.js";
import { nvidiaPartitioner } from "../../../src/clients/agent/drivers/nvidia-partitioner.js";
import { validateMadePartition } from "../../../src/domain/inventory/report-validation.js";
import { migHost } from "./mig-host.js";
import { FIXTURES, pci } from "./fixture-env.js";

const H100 = "0000:06:00.0";
const controlPath = pci(H100);
const NEW_UUID = "MIG-b4b2228d-6933-5839-bc0e-41ab9edb61c6";
const ONE_G = { name: "1g.10gb", toolId: "19" };
const made = { controlPath, uuid: NEW_UUID, toolRef: { gpu: 0, gpuInstanceId: 7, computeInstanceId: 0 } };

const changes = (calls: string[][]) => calls.filter((c) => c.some((a) => ["-cgi", "-dci", "-dgi"].includes(a)));

describe("MIG partitioner", () => {
  it("makes a GPU instance with its compute instance at the placement, and answers it as discovery lists it", async () => {
    const host = migHost();
    const result = await migPartitioner.create(host.env, { controlPath, profile: ONE_G, placement: { start: 0, size: 1 } });
    expect(result.command).toEqual(["nvidia-smi", "mig", "-i", "0", "-cgi", "19:0", "-C"]);
    expect(result.partition).toEqual({
      profile: "1g.10gb",
      uuid: NEW_UUID,
      placement: { start: 0, size: 1 },
      toolRef: { gpu: 0, gpuInstanceId: 7, computeInstanceId: 0 },
      attachHandle: { type: "MIG", info: { uuid: NEW_UUID, gpu_bdf: H100, gpu_instance_id: 7, compute_instance_id: 0 } },
    });
    const listed = (await nvidiaGpuDriver.discover(host.env)).find((d) => d.controlPath.info.bus === "06")!;
    expect(listed.partitioning!.partitions).toContainEqual(result.partition);
    expect(validateMadePartition(result.partition, listed.partitioning!.profiles, listed.partitioning!.slots)).toEqual(result.partition);
  });

  it("runs the --nvidia-smi binary it is configured with", async () => {
    const host = migHost();
    host.env.config = { nvidia: { nvidiaSmi: "/usr/local/bin/nvidia-smi" } };
    const result = await migPartitioner.create(host.env, { controlPath, profile: ONE_G, placement: { start: 0, size: 1 } });
    expect(result.command[0]).toBe("/usr/local/bin/nvidia-smi");
    expect(host.calls.every((c) => c[0] === "/usr/local/bin/nvidia-smi")).toBe(true);
  });

  it("refuses a profile the GPU does not list, making nothing", async () => {
    const host = migHost();
    await expect(migPartitioner.create(host.env, { controlPath, profile: { name: "9g.90gb", toolId: "99" }, placement: null })).rejects.toThrow(
      /has no MIG GPU-instance profile "99"/,
    );
    expect(changes(host.calls)).toEqual([]);
  });

  it("refuses a GPU that is not in MIG mode", async () => {
    const host = migHost();
    await expect(migPartitioner.create(host.env, { controlPath: pci("0000:0c:00.0"), profile: ONE_G, placement: null })).rejects.toThrow(/not in MIG mode/);
    expect(changes(host.calls)).toEqual([]);
  });

  it("surfaces nvidia-smi's refusal", async () => {
    const host = migHost();
    host.answers["mig -i 0 -cgi 19:0 -C"] = () => {
      throw new Error("nvidia-smi mig -i 0 -cgi 19:0 -C failed (exit 2): Unable to create a GPU instance on GPU  0 using profile 19: Insufficient Resources");
    };
    await expect(migPartitioner.create(host.env, { controlPath, profile: ONE_G, placement: { start: 0, size: 1 } })).rejects.toThrow(/Insufficient Resources/);
    expect(changes(host.calls)).toEqual([["nvidia-smi", "mig", "-i", "0", "-cgi", "19:0", "-C"]]);
  });

  it("destroys the GPU instance it made when its compute instance could not be made", async () => {
    const host = migHost();
    host.answers["mig -i 0 -cgi 19:0 -C"] = () => {
      host.created = true; // GPU instance 7 exists, its compute instance does not
      throw new Error("nvidia-smi mig -i 0 -cgi 19:0 -C failed (exit 2): Unable to create a compute instance on GPU  0 GPU instance ID  7: Insufficient Resources");
    };
    host.answers["mig -i 0 -lci"] = () => readFileSync(`${FIXTURES}gpu-mig/mig-lci.txt`, "utf8");
    host.answers["mig -i 0 -gi 7 -dgi"] = () => "Successfully destroyed GPU instance ID  7 from GPU  0\n";
    await expect(migPartitioner.create(host.env, { controlPath, profile: ONE_G, placement: { start: 0, size: 1 } })).rejects.toThrow(/Insufficient Resources/);
    expect(changes(host.calls).at(-1)).toEqual(["nvidia-smi", "mig", "-i", "0", "-gi", "7", "-dgi"]);
  });

  it("leaves alone, when a make fails, the instances that have their compute instances", async () => {
    const host = migHost();
    host.answers["mig -i 0 -cgi 19:0 -C"] = () => {
      host.created = true; // another complete instance appeared meanwhile
      throw new Error("nvidia-smi mig -i 0 -cgi 19:0 -C failed (exit 2): Insufficient Resources");
    };
    await expect(migPartitioner.create(host.env, { controlPath, profile: ONE_G, placement: { start: 0, size: 1 } })).rejects.toThrow(/Insufficient Resources/);
    expect(changes(host.calls)).toEqual([["nvidia-smi", "mig", "-i", "0", "-cgi", "19:0", "-C"]]);
  });

  it("destroys a partition's compute instances, then its GPU instance", async () => {
    const host = migHost();
    host.created = true;
    host.answers["mig -i 0 -gi 7 -dci"] = () => "Successfully destroyed compute instance ID  0 from GPU  0 GPU instance ID  7\n";
    host.answers["mig -i 0 -gi 7 -dgi"] = () => "Successfully destroyed GPU instance ID  7 from GPU  0\n";
    const result = await migPartitioner.destroy(host.env, made);
    expect(changes(host.calls)).toEqual([
      ["nvidia-smi", "mig", "-i", "0", "-gi", "7", "-dci"],
      ["nvidia-smi", "mig", "-i", "0", "-gi", "7", "-dgi"],
    ]);
    expect(result.command).toEqual(["nvidia-smi", "mig", "-i", "0", "-gi", "7", "-dci", "&&", "nvidia-smi", "mig", "-i", "0", "-gi", "7", "-dgi"]);
  });

  it("takes a partition that is already gone as destroyed, running nothing", async () => {
    const host = migHost();
    expect(await migPartitioner.destroy(host.env, made)).toEqual({ command: [] });
    expect(changes(host.calls)).toEqual([]);
  });

  it("takes a GPU no longer in MIG mode as having no partitions left", async () => {
    const host = migHost({ mig: { nvidiaSmiQuery: async () => '<gpu id="00000000:06:00.0"><mig_mode><current_mig>Disabled</current_mig></mig_mode></gpu>' } });
    expect(await migPartitioner.destroy(host.env, made)).toEqual({ command: [] });
    expect(host.calls).toEqual([]);
  });

  it("refuses to call a partition destroyed on a GPU nvidia-smi does not see", async () => {
    const host = migHost({ mig: { nvidiaSmiQuery: async () => "Unable to determine the device handle for GPU0000:06:00.0: Unknown Error" } });
    await expect(migPartitioner.destroy(host.env, made)).rejects.toThrow(/does not see GPU 0000:06:00.0/);
  });

  it("leaves alone a GPU instance whose id now names another MIG device", async () => {
    const host = migHost();
    const reused = { ...made, toolRef: { gpu: 0, gpuInstanceId: 1, computeInstanceId: 0 } };
    expect(await migPartitioner.destroy(host.env, reused)).toEqual({ command: [] });
    expect(changes(host.calls)).toEqual([]);
  });

  it("surfaces nvidia-smi's refusal to destroy", async () => {
    const host = migHost();
    host.created = true;
    host.answers["mig -i 0 -gi 7 -dci"] = () => {
      throw new Error("nvidia-smi mig -i 0 -gi 7 -dci failed (exit 19): Unable to destroy compute instance ID  0 from GPU  0 GPU instance ID  7: In use by another client");
    };
    await expect(migPartitioner.destroy(host.env, made)).rejects.toThrow(/In use by another client/);
    expect(changes(host.calls)).toHaveLength(1);
  });
});

describe("the NVIDIA driver's partitioner", () => {
  it("partitions both MIG GPUs and mdev types, and is the driver's", () => {
    expect(nvidiaPartitioner.driverNames).toEqual(["NVIDIA_MIG", "NVIDIA_VGPU"]);
    expect(nvidiaGpuDriver.partitioner).toBe(nvidiaPartitioner);
  });

  it("hands a MIG profile (a numeric id) and a MIG partition to the MIG partitioner", async () => {
    const host = migHost();
    const result = await nvidiaPartitioner.create(host.env, { controlPath, profile: ONE_G, placement: { start: 0, size: 1 } });
    expect(result.command).toContain("-cgi");
    host.answers["mig -i 0 -gi 7 -dci"] = () => "";
    host.answers["mig -i 0 -gi 7 -dgi"] = () => "";
    expect((await nvidiaPartitioner.destroy(host.env, made)).command).toContain("-dgi");
  });
});

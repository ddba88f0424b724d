/**
 * NVIDIA GPUs (Cyborg gpu/nvidia): `lspci -nnn -D` lines of class "VGA compatible controller" or
 * "3D controller" with vendor 10de. A GPU is reported as one deployable `<host>_<BDF>`:
 * - pGPU: 1 accelerator, 1 PCI handle, rc PGPU, traits OWNER_CYBORG, CUSTOM_GPU_NVIDIA,
 *   CUSTOM_GPU_NVIDIA_<PID> (the agent-driver spec's CUSTOM_<TYPE>_<VENDOR>_<PRODUCT>; Cyborg
 *   names it CUSTOM_NVIDIA_<PID>);
 * - vGPU, when an enabled type is offered under `mdev_supported_types/<type>/`: available + created
 *   instances, one MDEV handle each (vgpu_mark "<type>_<n>"), rc VGPU, traits OWNER_CYBORG,
 *   CUSTOM_GPU_NVIDIA, CUSTOM_GPU_NVIDIA_<PID>_<type name after its first word>, e.g. "GRID T4-2B" ->
 *   CUSTOM_GPU_NVIDIA_1EB8_T4_2B.
 * A GPU offers at most one vGPU type (the first enabled one that applies), as in Cyborg.
 * A GPU in MIG mode, and with `onDemandMdevs` a GPU offering mdev types, is reported with
 * `partitioning` and no deployable instead (nvidia-gpu-partitions.ts); the driver's partitioner makes
 * and removes its partitions (nvidia-partitioner.ts).
 */
import { join } from "node:path";
import type { DriverAttachHandle } from "../../../domain/inventory/handle-report.js";
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { Driver, DriverEnv, NvidiaGpuConfig } from "./driver.js";
import { parseLspci, warnMalformed, type LspciDevice } from "./lspci.js";
import { lspciDevice } from "./lspci-device.js";
import { nvidiaGpuCleaner } from "./nvidia-gpu-clean.js";
import { gpuMdevPartitioning, gpuMigPartitioning, partitionedGpu, readMig, type MigRead } from "./nvidia-gpu-partitions.js";
import { nvidiaPartitioner } from "./nvidia-partitioner.js";
import { linkDomains } from "./nvidia-topo.js";
import { attributeList, customTrait, deviceTraits, pciAddress } from "./naming.js";
import { exists, isVirtualFunction, listDir, pciDeviceDir, readLine } from "./sysfs.js";

export const NVIDIA_VENDOR_ID = "10de";
const GPU_CLASSES = ["VGA compatible controller", "3D controller"];

interface VgpuType {
  type: string;
  /** The sysfs `name` reduced as Cyborg does: "GRID T4-2B" -> "T4_2B". */
  traitName: string;
  instances: number;
}

function vgpuTraitName(name: string): string {
  const space = name.indexOf(" ");
  return space < 0 ? name : name.slice(space + 1);
}

async function readVgpuType(dir: string, type: string): Promise<VgpuType> {
  const available = await readLine(join(dir, "available_instances"));
  if (available === null || !/^\d+$/.test(available)) {
    throw new Error(`${type}: available_instances is ${JSON.stringify(available)}, not a count`);
  }
  const name = await readLine(join(dir, "name"));
  if (!name) throw new Error(`${type}: no name`);
  const created = (await listDir(join(dir, "devices"))).length;
  return { type, traitName: vgpuTraitName(name), instances: Number(available) + created };
}

/** The vGPU type this GPU is configured for, or null for a pGPU. */
async function vgpuTypeOf(deviceDir: string, bdf: string, config: NvidiaGpuConfig): Promise<VgpuType | null> {
  for (const type of config.enabledVgpuTypes ?? []) {
    const addresses = config.vgpuDeviceAddresses?.[type]?.map((a) => a.toLowerCase());
    if (addresses && !addresses.includes(bdf)) continue;
    const dir = join(deviceDir, "mdev_supported_types", type);
    if (await exists(dir)) return readVgpuType(dir, type);
    // Configured for this very GPU but not offered: Cyborg raises InvalidVGPUType.
    if (addresses) throw new Error(`vGPU type ${type} is configured for ${bdf} but not offered by it`);
  }
  return null;
}

function mdevHandles(bdf: string, vgpu: VgpuType): DriverAttachHandle[] {
  return Array.from({ length: vgpu.instances }, (_, n) => ({
    type: "MDEV" as const,
    info: { asked_type: vgpu.type, ...pciAddress(bdf), vgpu_mark: `${vgpu.type}_${n}` },
  }));
}

async function gpuDevice(env: DriverEnv, gpu: LspciDevice, mig: MigRead | null): Promise<DriverDevice | null> {
  const config = env.config.nvidia ?? {};
  const dir = pciDeviceDir(env.sysfsRoot, gpu.address);
  if (config.skipVirtualFunctions && (await isVirtualFunction(dir))) return null;
  const partitioning = gpuMigPartitioning(env, gpu.address, mig) ?? (await gpuMdevPartitioning(env, gpu.address));
  if (partitioning) return partitionedGpu(env, gpu, partitioning);
  const vgpu = await vgpuTypeOf(dir, gpu.address, config);
  if (vgpu && vgpu.instances === 0) {
    env.log?.warn({ address: gpu.address, vgpuType: vgpu.type }, "vGPU type has no instances; GPU not reported");
    return null;
  }
  const [vendorTrait, productTrait] = deviceTraits("GPU", "NVIDIA", gpu.productId) as [string, string];
  return lspciDevice(env.hostname, gpu, {
    type: "GPU",
    model: gpu.description,
    vendorBoardInfo: { vendor_info: "gpu_vb_info" },
    deployable: {
      numAccelerators: vgpu ? vgpu.instances : 1,
      driverName: "NVIDIA",
      attributes: vgpu
        ? attributeList("VGPU", ["OWNER_CYBORG", vendorTrait, customTrait(productTrait, vgpu.traitName)])
        : attributeList("PGPU", ["OWNER_CYBORG", vendorTrait, productTrait]),
      attachHandles: vgpu ? mdevHandles(gpu.address, vgpu) : [{ type: "PCI", info: pciAddress(gpu.address) }],
    },
  });
}

export const nvidiaGpuDriver: Driver = {
  name: "nvidia-gpu",
  cleaner: nvidiaGpuCleaner,
  partitioner: nvidiaPartitioner,
  async discover(env) {
    const listing = parseLspci(await env.lspci());
    warnMalformed(listing, (line) => GPU_CLASSES.some((c) => line.includes(c)), env.log);
    const gpus = listing.devices.filter((gpu) => gpu.vendorId === NVIDIA_VENDOR_ID && GPU_CLASSES.includes(gpu.className));
    const mig = gpus.length === 0 ? null : await readMig(env);
    const devices: DriverDevice[] = [];
    for (const gpu of gpus) {
      try {
        const device = await gpuDevice(env, gpu, mig);
        if (device) devices.push(device);
      } catch (err) {
        env.log?.warn({ address: gpu.address, err: (err as Error).message }, "GPU skipped");
      }
    }
    return withLinkDomains(env, devices);
  },
};

/** The GPUs with their NVLink domains (nvidia-topo.ts), when `nvidia-smi topo -m` can be read. */
async function withLinkDomains(env: DriverEnv, devices: DriverDevice[]): Promise<DriverDevice[]> {
  const read = env.topology?.nvidiaSmiTopo;
  if (!read || devices.length === 0) return devices;
  let domains: Map<string, string> | null;
  const addresses = devices.map((d) => bdfOf(d.controlPath.info));
  try {
    domains = linkDomains(await read(), addresses);
  } catch (err) {
    env.log?.warn({ err: (err as Error).message }, "nvidia-smi topo -m unreadable; GPUs reported without link domains");
    return devices;
  }
  if (!domains) {
    env.log?.warn({ gpus: devices.length }, "nvidia-smi topo -m does not list the GPUs found; GPUs reported without link domains");
    return devices;
  }
  return devices.map((d) => {
    const linkDomain = domains.get(bdfOf(d.controlPath.info));
    if (!linkDomain) return d;
    return { ...d, topology: { numaNode: null, pcieRoot: null, pcieSwitch: null, ...d.topology, linkDomain } };
  });
}

function bdfOf(info: Record<string, unknown>): string {
  return `${info.domain}:${info.bus}:${info.device}.${info.function}`.toLowerCase();
}

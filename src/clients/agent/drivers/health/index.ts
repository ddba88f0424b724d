/**
 * Each reported device's health, read with the inventory: AER counters for every PCI device,
 * nvidia-smi and the kernel log's XID events for NVIDIA GPUs, OPAE's error registers for Intel
 * FPGAs, qat/state for QAT, injection for the fake device. Tolerant by design: a source that cannot
 * be read makes the device UNKNOWN with the reason, and never fails the report. Each host-wide
 * source (nvidia-smi, the kernel log, fpgainfo) runs once a pass.
 */
import type { DriverDevice } from "../../../../domain/inventory/report.js";
import type { DeviceHealth } from "../../../../domain/inventory/health.js";
import type { DriverEnv } from "../driver.js";
import { MIG_DRIVER_NAME } from "../nvidia-mig.js";
import { VGPU_DRIVER_NAME } from "../nvidia-partitioner.js";
import { pciDeviceDir } from "../sysfs.js";
import { aerHealth } from "./aer.js";
import { parseFpgainfoErrors } from "./fpgainfo.js";
import { parseNvidiaSmi } from "./nvidia-smi.js";
import { combineHealth, OK_PART, unreadable, type HealthPart } from "./part.js";
import type { HealthSources } from "./sources.js";
import { qatHealth } from "./qat.js";
import { parseXids, slotOf, xidHealth } from "./xid.js";

type Outcome<T> = { ok: true; value: T } | { ok: false; why: string };

/** The source's output read through `parse`, once a pass; a failure is kept as the reason. */
function source<S, T>(run: (() => Promise<S>) | undefined, parse: (text: S) => T): (() => Promise<Outcome<T>>) | undefined {
  if (!run) return undefined;
  let result: Promise<Outcome<T>> | undefined;
  return () =>
    (result ??= run().then(
      (text) => ({ ok: true as const, value: parse(text) }),
      (err: unknown) => ({ ok: false as const, why: err instanceof Error ? err.message : String(err) }),
    ));
}

const bdfOf = (d: DriverDevice): string | null => {
  const i = d.controlPath.info as Record<string, unknown>;
  return typeof i.bus === "string" ? `${String(i.domain ?? "0000")}:${i.bus}:${String(i.device)}.${String(i.function)}` : null;
};
const drivenBy = (d: DriverDevice, name: string) => d.deployables.some((dep) => dep.driverName === name);
/** An NVIDIA GPU of the nvidia-gpu driver: whole, or partitioned (MIG, vGPU on demand) with no deployable of its own. */
const nvidiaGpu = (d: DriverDevice) => drivenBy(d, "NVIDIA") || [MIG_DRIVER_NAME, VGPU_DRIVER_NAME].includes(d.partitioning?.driverName ?? "");

/** The devices with their health set (stubs, copies of a failed driver's last devices, are left as they are). */
export async function withHealth(devices: readonly DriverDevice[], env: DriverEnv): Promise<DriverDevice[]> {
  const sources: Sources = {
    smi: source(env.health?.nvidiaSmi, parseNvidiaSmi),
    xids: source(env.health?.kernelLog, parseXids),
    opae: source(env.health?.fpgainfoErrors, (text) => (text === null ? null : parseFpgainfoErrors(text))),
  };
  return Promise.all(devices.map(async (d) => (d.stub ? d : { ...d, health: await deviceHealth(d, env, sources) })));
}

interface Sources {
  smi?: () => Promise<Outcome<Map<string, HealthPart>>>;
  xids?: () => Promise<Outcome<Map<string, Map<number, number>>>>;
  /** null: fpgainfo is not installed, and the FPGAs' health is what the other sources say. */
  opae?: () => Promise<Outcome<Map<string, HealthPart> | null>>;
}

async function deviceHealth(d: DriverDevice, env: DriverEnv, sources: Sources): Promise<DeviceHealth> {
  if (drivenBy(d, "fake")) return env.config.fake?.health ?? combineHealth([OK_PART]);
  const bdf = bdfOf(d);
  if (bdf === null) return combineHealth([OK_PART]);
  const dir = pciDeviceDir(env.sysfsRoot, bdf);
  const parts: HealthPart[] = [await aerHealth(dir)];
  if (nvidiaGpu(d)) parts.push(...(await nvidiaParts(bdf, sources)));
  if (d.type === "QAT") parts.push(await qatHealth(dir));
  if (d.type === "FPGA" && drivenBy(d, "intel")) parts.push(...(await opaeParts(bdf, sources)));
  return combineHealth(parts);
}

async function opaeParts(bdf: string, sources: Sources): Promise<HealthPart[]> {
  const opae = await sources.opae?.();
  if (!opae) return [];
  if (!opae.ok) return [unreadable("fpgainfo errors all", opae.why)];
  if (opae.value === null) return [];
  return [opae.value.get(slotOf(bdf)) ?? unreadable("fpgainfo errors all", "it does not list this card")];
}

async function nvidiaParts(bdf: string, sources: Sources): Promise<HealthPart[]> {
  const parts: HealthPart[] = [];
  if (sources.smi) {
    const smi = await sources.smi();
    if (!smi.ok) parts.push(unreadable("nvidia-smi", smi.why));
    else parts.push(smi.value.get(bdf) ?? unreadable("nvidia-smi", "it does not list this GPU"));
  }
  if (sources.xids) {
    const xids = await sources.xids();
    parts.push(xids.ok ? xidHealth(xids.value.get(slotOf(bdf))) : unreadable("kernel log (XID events)", xids.why));
  }
  return parts;
}

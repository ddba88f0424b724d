/**
 * An SR-IOV network function as the generic PCI driver reports it (pci.ts): a physical function
 * (PCI class 02) with virtual functions enabled shares its port among them, so its VFs are the
 * attach handles of its deployable (Placement's class SRIOV_NET_VF) and its link speed is a
 * bandwidth capacity each bind draws from by amount (NET_BW_EGR_KILOBIT_PER_SEC and
 * NET_BW_IGR_KILOBIT_PER_SEC: a full-duplex link carries its speed each way).
 *
 * What it reads, as the kernel documents it (Documentation/ABI/testing/sysfs-bus-pci and
 * sysfs-class-net): `sriov_totalvfs` (present when the function supports SR-IOV),
 * `sriov_numvfs` (how many VFs are enabled), the `virtfnN` links to each VF, and the PF's
 * `net/<interface>/speed` in Mb/s (-1 when unknown; reading it fails with EINVAL while the
 * interface is down).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { DriverCapacity } from "../../../domain/inventory/partitioning-report.js";
import { listDir, pciDeviceDir, readLine, virtualFunctions } from "./sysfs.js";

export const SRIOV_VF_CLASS = "SRIOV_NET_VF";

export interface SriovFunction {
  /** The enabled VFs' BDFs, in virtfn order. */
  vfs: string[];
  /** The port's bandwidth each way; [] while the link speed is unknown (link down). */
  capacities: DriverCapacity[];
}

/** The PF's SR-IOV state; null for a function without SR-IOV, or with no VF enabled (it passes through whole). */
export async function readSriovFunction(sysfsRoot: string, bdf: string): Promise<SriovFunction | null> {
  const dir = pciDeviceDir(sysfsRoot, bdf);
  const total = Number(await readLine(join(dir, "sriov_totalvfs")));
  const enabled = Number(await readLine(join(dir, "sriov_numvfs")));
  if (!(total > 0) || !(enabled > 0)) return null;
  const vfs = await virtualFunctions(dir);
  if (vfs.length === 0) return null;
  const mbps = await linkSpeed(dir);
  return { vfs, capacities: mbps === null ? [] : bandwidth(mbps * 1000) };
}

function bandwidth(kbps: number): DriverCapacity[] {
  return [
    { name: "egress bandwidth", resourceClass: "NET_BW_EGR_KILOBIT_PER_SEC", total: kbps, unit: "kbit/s" },
    { name: "ingress bandwidth", resourceClass: "NET_BW_IGR_KILOBIT_PER_SEC", total: kbps, unit: "kbit/s" },
  ];
}

/** The first of the PF's interfaces with a known speed, in Mb/s; null when none has one. */
async function linkSpeed(dir: string): Promise<number | null> {
  for (const iface of await listDir(join(dir, "net"))) {
    let raw: string;
    try {
      raw = (await readFile(join(dir, "net", iface, "speed"), "utf8")).trim();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EINVAL" || code === "ENOENT") continue;
      throw err;
    }
    const mbps = Number(raw);
    if (Number.isSafeInteger(mbps) && mbps > 0) return mbps;
  }
  return null;
}

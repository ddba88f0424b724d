/**
 * Where a PCI device sits on its host, read from sysfs (docs/drivers.md, Topology):
 * - numaNode: the device's `numa_node` (-1, or no file: null);
 * - pcieRoot and pcieSwitch from the device's resolved sysfs path,
 *   `<root>/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0`: the functions
 *   between the host bridge (`pci<domain>:<bus>`) and the device are the PCIe ports above it. The
 *   first is the root port. A PCIe switch shows in sysfs as its upstream port with its downstream
 *   ports beneath, so when the device hangs below more than the root port, its parent is a switch's
 *   downstream port and the parent's parent that switch's upstream port: that is pcieSwitch. A
 *   device straight under the root port has no switch (null); a root-complex integrated device
 *   (directly under the host bridge) has neither (both null).
 * A device whose sysfs entry cannot be read keeps the topology its driver gave (none, or only a link
 * domain); one of which nothing is known is reported without topology.
 */
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { DeviceTopology } from "../../../domain/inventory/topology-report.js";
import type { DriverEnv } from "./driver.js";
import { isBdf } from "./naming.js";
import { pciDeviceDir, readLine } from "./sysfs.js";

const HOST_BRIDGE_RE = /^pci[0-9a-f]{4}:[0-9a-f]{2}$/i;

/** The PCIe ports above a device, from its resolved sysfs path's components (root port first). */
export function pcieAncestry(components: readonly string[]): { pcieRoot: string | null; pcieSwitch: string | null } | null {
  const bridge = components.findIndex((c) => HOST_BRIDGE_RE.test(c));
  if (bridge < 0) return null;
  const chain = components.slice(bridge + 1).filter(isBdf).map((c) => c.toLowerCase());
  const ports = chain.slice(0, -1);
  return { pcieRoot: ports[0] ?? null, pcieSwitch: ports.length >= 3 ? ports[ports.length - 2]! : null };
}

/** sysfs `numa_node`: a node number, or null for -1 (no NUMA) and a missing or unreadable value. */
export function parseNumaNode(text: string | null): number | null {
  if (text === null || !/^\d+$/.test(text)) return null;
  return Number(text);
}

/** The device's NUMA node and PCIe ports; null when its sysfs entry does not exist. */
export async function readPciTopology(sysfsRoot: string, bdf: string): Promise<Omit<DeviceTopology, "linkDomain"> | null> {
  const dir = pciDeviceDir(sysfsRoot, bdf);
  let resolved: string;
  try {
    resolved = await realpath(dir);
  } catch {
    return null;
  }
  const ancestry = pcieAncestry(resolved.split("/")) ?? { pcieRoot: null, pcieSwitch: null };
  return { numaNode: parseNumaNode(await readLine(join(dir, "numa_node"))), ...ancestry };
}

function bdfOf(device: DriverDevice): string | null {
  const i = device.controlPath.info as Record<string, unknown>;
  if (device.controlPath.type !== "PCI" || typeof i.bus !== "string") return null;
  return `${i.domain ?? "0000"}:${i.bus}:${i.device}.${i.function}`.toLowerCase();
}

/** Each PCI device with the topology sysfs shows for it, keeping a link domain its driver set. */
export async function withSysfsTopology(env: DriverEnv, devices: readonly DriverDevice[]): Promise<DriverDevice[]> {
  const out: DriverDevice[] = [];
  for (const device of devices) {
    const bdf = bdfOf(device);
    const read = bdf ? await readPciTopology(env.sysfsRoot, bdf).catch(() => null) : null;
    const topology: DeviceTopology | null = read ? { ...read, linkDomain: device.topology?.linkDomain ?? null } : null;
    // Nothing known (no NUMA, integrated in the root complex, no peer link): left out, as before topology.
    if (!topology || Object.values(topology).every((v) => v === null)) out.push(device);
    else out.push({ ...device, topology });
  }
  return out;
}

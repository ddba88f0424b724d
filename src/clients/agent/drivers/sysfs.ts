/**
 * The few sysfs reads the drivers need. Paths follow the kernel layout under a configurable root:
 * `<root>/bus/pci/devices/<BDF>` (a symlink into `<root>/devices/...` on a real host), whose
 * `virtfnN` / `physfn` entries are symlinks to sibling function directories.
 */
import { lstat, readFile, readdir, readlink } from "node:fs/promises";
import { basename, join } from "node:path";
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { DriverEnv } from "./driver.js";
import { hexId, isBdf } from "./naming.js";

export function pciDevicesDir(sysfsRoot: string): string {
  return join(sysfsRoot, "bus", "pci", "devices");
}

export function pciDeviceDir(sysfsRoot: string, bdf: string): string {
  return join(pciDevicesDir(sysfsRoot), bdf);
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** First line, trimmed; null when the file does not exist. Other errors (EACCES, EIO) throw. */
export async function readLine(path: string): Promise<string | null> {
  try {
    return (await readFile(path, "utf8")).split("\n")[0]!.trim();
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

/** Entry names, sorted, dot-files left out; [] when the directory does not exist. */
export async function listDir(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).filter((n) => !n.startsWith(".")).sort();
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

/** The BDFs under <root>/bus/pci/devices, sorted. */
export async function listPciDevices(sysfsRoot: string): Promise<string[]> {
  return (await listDir(pciDevicesDir(sysfsRoot))).filter(isBdf);
}

/** `KEY=value` lines of a uevent file; {} when it does not exist. */
export async function readUevent(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if (isMissing(err)) return {};
    throw err;
  }
  const entries: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) entries[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return entries;
}

/** The BDFs of a PF's VFs, in virtfn order (virtfn0, virtfn1, ..., virtfn10). */
export async function virtualFunctions(deviceDir: string): Promise<string[]> {
  const links = (await listDir(deviceDir))
    .map((name) => ({ name, n: /^virtfn(\d+)$/.exec(name)?.[1] }))
    .filter((l): l is { name: string; n: string } => l.n !== undefined)
    .sort((a, b) => Number(a.n) - Number(b.n));
  const vfs: string[] = [];
  for (const link of links) {
    const target = basename(await readlink(join(deviceDir, link.name)));
    if (!isBdf(target)) throw new Error(`${link.name} of ${deviceDir} points at ${target}, not a PCI function`);
    vfs.push(target.toLowerCase());
  }
  return vfs;
}

/** A VF has a `physfn` link to its PF. */
export function isVirtualFunction(deviceDir: string): Promise<boolean> {
  return exists(join(deviceDir, "physfn"));
}

/**
 * The physical functions in sysfs with this vendor id and one of these product ids, each turned
 * into a device by `build`; a function that cannot be read is skipped with a warning.
 */
export async function discoverPhysicalFunctions(
  env: DriverEnv,
  vendorId: string,
  products: Readonly<Record<string, unknown>>,
  what: string,
  build: (bdf: string, productId: string) => Promise<DriverDevice>,
): Promise<DriverDevice[]> {
  const devices: DriverDevice[] = [];
  for (const bdf of await listPciDevices(env.sysfsRoot)) {
    try {
      const dir = pciDeviceDir(env.sysfsRoot, bdf);
      if (hexId(await readLine(join(dir, "vendor"))) !== vendorId) continue;
      const productId = hexId(await readLine(join(dir, "device")));
      if (!productId || !products[productId] || (await isVirtualFunction(dir))) continue;
      devices.push(await build(bdf, productId));
    } catch (err) {
      env.log?.warn({ address: bdf, err: (err as Error).message }, `${what} skipped`);
    }
  }
  return devices;
}

/**
 * PCIe Advanced Error Reporting counters of any PCI device, from sysfs (the kernel's ABI,
 * Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats): `aer_dev_correctable`,
 * `aer_dev_fatal` and `aer_dev_nonfatal` under the device's directory, each lines of
 * `<error name> <count>` ending with `TOTAL_ERR_COR`, `TOTAL_ERR_FATAL` or `TOTAL_ERR_NONFATAL`.
 * A device without the files (no AER capability, or a kernel without the stats) says nothing.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { reason, unreadable, type HealthPart } from "./part.js";
import { worstStatus, type HealthStatus } from "../../../../domain/inventory/health.js";

const FILES = [
  { file: "aer_dev_fatal", total: "TOTAL_ERR_FATAL", code: "AER_FATAL", status: "CRITICAL", what: "fatal uncorrectable PCIe errors (AER)" },
  { file: "aer_dev_nonfatal", total: "TOTAL_ERR_NONFATAL", code: "AER_NONFATAL", status: "WARNING", what: "non-fatal uncorrectable PCIe errors (AER)" },
  { file: "aer_dev_correctable", total: "TOTAL_ERR_COR", code: "AER_CORRECTABLE", status: "OK", what: "correctable PCIe errors (AER)" },
] as const satisfies ReadonlyArray<{ file: string; total: string; code: string; status: HealthStatus; what: string }>;

/** The counters of one AER file: each error name's count, and the total (the TOTAL_ line, or their sum). */
export function parseAerCounters(text: string, totalKey: string): { total: number; counts: Record<string, number> } | null {
  const counts: Record<string, number> = {};
  let total: number | null = null;
  for (const line of text.split("\n")) {
    const m = /^\s*(\S+)\s+(\d+)\s*$/.exec(line);
    if (!m) continue;
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n)) continue;
    if (m[1] === totalKey) total = n;
    else counts[m[1]!] = n;
  }
  if (total === null && Object.keys(counts).length === 0) return null;
  return { total: total ?? Object.values(counts).reduce((a, b) => a + b, 0), counts };
}

/** The AER part of the health of the PCI device whose sysfs directory is `deviceDir`. */
export async function aerHealth(deviceDir: string): Promise<HealthPart> {
  const part: HealthPart = { status: "OK", reasons: [] };
  for (const f of FILES) {
    let text: string;
    try {
      text = await readFile(join(deviceDir, f.file), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      return unreadable(f.file, (err as Error).message);
    }
    const counters = parseAerCounters(text, f.total);
    if (counters === null) return unreadable(f.file, "no `<name> <count>` lines in it");
    if (counters.total === 0) continue;
    const named = Object.entries(counters.counts).filter(([, n]) => n > 0).map(([k]) => k);
    part.reasons.push(reason(f.code, named.length > 0 ? `${f.what}: ${named.join(", ")}` : f.what, counters.total));
    part.status = worstStatus(part.status, f.status);
  }
  return part;
}

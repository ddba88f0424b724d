/**
 * NVIDIA XID events from the kernel log: lines `NVRM: Xid (PCI:<domain>:<bus>:<device>): <xid>, ...`
 * (NVIDIA's XID errors documentation). Counted per GPU and XID number; each XID becomes a reason
 * with its count. Which XIDs say the hardware is failing (and how badly) follows NVIDIA's
 * catalogue; the others are mostly a program's own faults (13, 31, 43, 45, ...) and are not
 * reported as the device's health.
 */
import { reason, type HealthPart } from "./part.js";
import { worstStatus, type HealthStatus } from "../../../../domain/inventory/health.js";

/** XID -> what it says, and how bad it is for the device. */
export const HARDWARE_XIDS: ReadonlyMap<number, { status: HealthStatus; what: string }> = new Map([
  [48, { status: "CRITICAL", what: "double-bit ECC error" }],
  [61, { status: "WARNING", what: "internal micro-controller breakpoint/warning" }],
  [62, { status: "CRITICAL", what: "internal micro-controller halt" }],
  [63, { status: "WARNING", what: "ECC page retirement or row remapping recorded" }],
  [64, { status: "CRITICAL", what: "ECC page retirement or row remapping failed" }],
  [74, { status: "CRITICAL", what: "NVLink error" }],
  [79, { status: "CRITICAL", what: "GPU has fallen off the bus" }],
  [92, { status: "WARNING", what: "high single-bit ECC error rate" }],
  [94, { status: "WARNING", what: "contained ECC error" }],
  [95, { status: "CRITICAL", what: "uncontained ECC error" }],
  [119, { status: "CRITICAL", what: "GSP RPC timeout" }],
  [120, { status: "CRITICAL", what: "GSP error" }],
]);

const XID_LINE = /NVRM: Xid \(PCI:([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\): (\d+)\b/;

/** XID counts per GPU slot ("0000:af:00": the log names no function), per XID number. */
export function parseXids(log: string): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const line of log.split("\n")) {
    const m = XID_LINE.exec(line);
    if (!m) continue;
    const slot = `${m[1]!.slice(-4).toLowerCase()}:${m[2]!.toLowerCase()}:${m[3]!.toLowerCase()}`;
    const xid = Number(m[4]);
    const counts = out.get(slot) ?? new Map<number, number>();
    counts.set(xid, (counts.get(xid) ?? 0) + 1);
    out.set(slot, counts);
  }
  return out;
}

/** The XID part of one GPU's health (its slot's counts from parseXids). */
export function xidHealth(counts: ReadonlyMap<number, number> | undefined): HealthPart {
  const part: HealthPart = { status: "OK", reasons: [] };
  for (const [xid, n] of [...(counts ?? new Map<number, number>())].sort((a, b) => a[0] - b[0])) {
    const known = HARDWARE_XIDS.get(xid);
    if (!known) continue;
    part.status = worstStatus(part.status, known.status);
    part.reasons.push(reason("XID", `Xid ${xid}: ${known.what}`, n));
  }
  return part;
}

/** "0000:af:00.0" -> "0000:af:00", the slot an XID line names. */
export const slotOf = (bdf: string) => bdf.slice(0, bdf.lastIndexOf("."));

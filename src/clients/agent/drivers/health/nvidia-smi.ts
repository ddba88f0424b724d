/**
 * NVIDIA GPU health from `nvidia-smi -q -x` (NVIDIA's documented XML, nvsmi_device_v*.dtd): per
 * `<gpu id="<bus id>">`, the uncorrectable ECC counts (volatile: since the driver loaded;
 * aggregate: over the GPU's life), pages pending retirement, and row remapping pending or failed.
 * Both layouts of `<ecc_errors>` are read: `double_bit/total` (drivers before R555) and
 * `dram_uncorrectable` + `sram_uncorrectable_*` (R555 on). "N/A" (a GPU without the feature) counts
 * as nothing. A GPU nvidia-smi cannot reach is named in its "Unable to determine the device handle
 * for GPU<bus id>: <error>" line: that is GPU_LOST.
 */
import { reason, type HealthPart } from "./part.js";
import { worstStatus } from "../../../../domain/inventory/health.js";

/** "00000000:AF:00.0" or "0000:af:00.0" -> "0000:af:00.0". */
export function normalizeBusId(id: string): string | null {
  const m = /^(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$/.exec(id.trim());
  if (!m) return null;
  const domain = (m[1] ?? "0000").slice(-4).toLowerCase();
  return `${domain}:${m[2]!.toLowerCase()}:${m[3]!.toLowerCase()}.${m[4]}`;
}

/** The text of the first element at `path` (tag names, nested) inside `xml`, or null. */
function at(xml: string, ...path: string[]): string | null {
  let scope = xml;
  for (const tag of path) {
    const m = new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`).exec(scope);
    if (!m) return null;
    scope = m[1]!;
  }
  return scope.trim();
}

/** A count, or 0 for "N/A", absent or anything that is not a number. */
function count(text: string | null): number {
  return text !== null && /^\d+$/.test(text) ? Number(text) : 0;
}

const yes = (text: string | null) => text !== null && /^yes$/i.test(text);

/** Uncorrectable ECC errors in one `<volatile>` or `<aggregate>` block, in either layout. */
function uncorrectable(block: string | null): number {
  if (block === null) return 0;
  const legacy = at(block, "double_bit", "total");
  if (legacy !== null) return count(legacy);
  return count(at(block, "dram_uncorrectable")) + count(at(block, "sram_uncorrectable_parity")) + count(at(block, "sram_uncorrectable_secded")) + count(at(block, "sram_uncorrectable"));
}

/** One GPU's `<gpu>` element body. */
export function gpuHealth(gpu: string): HealthPart {
  const part: HealthPart = { status: "OK", reasons: [] };
  const add = (status: HealthPart["status"], code: string, message: string, n?: number) => {
    part.status = worstStatus(part.status, status);
    part.reasons.push(reason(code, message, n));
  };
  const ecc = at(gpu, "ecc_errors");
  const volatile = uncorrectable(ecc === null ? null : at(ecc, "volatile"));
  if (volatile > 0) add("CRITICAL", "ECC_VOLATILE_UNCORRECTABLE", "uncorrectable ECC errors since the driver loaded", volatile);
  const aggregate = uncorrectable(ecc === null ? null : at(ecc, "aggregate"));
  if (aggregate > 0) add("WARNING", "ECC_AGGREGATE_UNCORRECTABLE", "uncorrectable ECC errors over the GPU's life", aggregate);
  const retired = at(gpu, "retired_pages");
  if (retired !== null && (yes(at(retired, "pending_retirement")) || yes(at(retired, "pending_blacklist")))) {
    add("WARNING", "RETIRED_PAGES_PENDING", "memory pages are pending retirement: reset the GPU to retire them");
  }
  const remapped = at(gpu, "remapped_rows");
  if (remapped !== null && yes(at(remapped, "remapped_row_failure"))) add("CRITICAL", "ROW_REMAP_FAILURE", "row remapping failed: the GPU needs repair");
  if (remapped !== null && yes(at(remapped, "remapped_row_pending"))) add("WARNING", "ROW_REMAP_PENDING", "rows are pending remapping: reset the GPU to remap them");
  return part;
}

/** Every GPU nvidia-smi described or could not reach, by PCI address (0000:af:00.0). */
export function parseNvidiaSmi(output: string): Map<string, HealthPart> {
  const out = new Map<string, HealthPart>();
  for (const m of output.matchAll(/<gpu\s+id="([^"]+)"\s*>([\s\S]*?)<\/gpu>/g)) {
    const bdf = normalizeBusId(m[1]!);
    if (bdf) out.set(bdf, gpuHealth(m[2]!));
  }
  for (const m of output.matchAll(/Unable to determine the device handle for GPU\s*(?:\d+:\s*)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*:\s*([^\n]*)/g)) {
    const bdf = normalizeBusId(m[1]!);
    if (!bdf) continue;
    const detail = m[2]!.trim();
    out.set(bdf, { status: "CRITICAL", reasons: [reason("GPU_LOST", `nvidia-smi cannot reach the GPU${detail ? `: ${detail}` : ""}`)] });
  }
  return out;
}

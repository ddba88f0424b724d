/**
 * What nvidia-smi prints about MIG, in the layouts NVIDIA's MIG User Guide shows
 * (test/fixtures/gpu-mig/ and its sources in test/fixtures/README.md):
 * - `nvidia-smi -q -x`: per `<gpu id="<bus id>">`, `<uuid>`, `<mig_mode><current_mig>` and
 *   `<mig_devices><mig_device>{index, gpu_instance_id, compute_instance_id}`;
 * - `nvidia-smi -L`: `GPU <n>: <name> (UUID: GPU-...)`, then its MIG devices
 *   `  MIG <profile> Device <i>: (UUID: MIG-...)`;
 * - `nvidia-smi mig -lgip`: a table, two lines per GPU-instance profile (name, ID, Free/Total, ...);
 * - `nvidia-smi mig -lgipp`: `GPU <n> Profile ID <id> Placements: {<starts>}:<size>`;
 * - `nvidia-smi mig -lgi` and `-lci`: the GPU instances (profile ID, instance ID, Start:Size) and
 *   the compute instances (GPU instance ID, profile ID, instance ID); when there are none,
 *   nvidia-smi says "No GPU instances found: Not Found" instead.
 * Lines that do not fit a layout are not guessed at: a table row that almost fits is an error.
 */
import { normalizeBusId } from "./health/nvidia-smi.js";

export interface MigGpuQuery {
  /** GPU-... */
  uuid: string | null;
  /** `<current_mig>` is Enabled. */
  migEnabled: boolean;
  /** The MIG devices (by the index `nvidia-smi -L` numbers them with) and their instances. */
  devices: Array<{ index: number; gpuInstanceId: number; computeInstanceId: number }>;
}

export interface ListedGpu {
  index: number;
  uuid: string;
  /** MIG devices by their index: profile name (without "MIG ") and UUID. */
  migDevices: Map<number, { profile: string; uuid: string }>;
}

export interface GiProfile {
  gpu: number;
  /** "1g.10gb", "1g.10gb+me" (without "MIG "). */
  name: string;
  id: number;
  free: number;
  total: number;
  memoryGiB: number;
  sm: number;
}

export interface GiPlacements {
  gpu: number;
  profileId: number;
  starts: number[];
  size: number;
}

export interface GpuInstance {
  gpu: number;
  name: string;
  profileId: number;
  id: number;
  start: number;
  size: number;
}

export interface ComputeInstance {
  gpu: number;
  gpuInstanceId: number;
  name: string;
  profileId: number;
  id: number;
}

/** The text of the first `<tag>` in `xml`, trimmed, or null. */
function element(xml: string, tag: string): string | null {
  const m = new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`).exec(xml);
  return m ? m[1]!.trim() : null;
}

function int(text: string | null, what: string): number {
  if (text === null || !/^\d+$/.test(text)) throw new Error(`${what} is ${JSON.stringify(text)}, not a number`);
  return Number(text);
}

/** `nvidia-smi -q -x`: each GPU's MIG mode and MIG devices, by PCI address (0000:06:00.0). */
export function parseMigQuery(xml: string): Map<string, MigGpuQuery> {
  const out = new Map<string, MigGpuQuery>();
  for (const m of xml.matchAll(/<gpu\s+id="([^"]+)"\s*>([\s\S]*?)<\/gpu>/g)) {
    const bdf = normalizeBusId(m[1]!);
    if (!bdf) continue;
    const body = m[2]!;
    const devices = [...(element(body, "mig_devices") ?? "").matchAll(/<mig_device>([\s\S]*?)<\/mig_device>/g)].map((d) => ({
      index: int(element(d[1]!, "index"), `${bdf} mig_device index`),
      gpuInstanceId: int(element(d[1]!, "gpu_instance_id"), `${bdf} gpu_instance_id`),
      computeInstanceId: int(element(d[1]!, "compute_instance_id"), `${bdf} compute_instance_id`),
    }));
    const current = element(element(body, "mig_mode") ?? "", "current_mig");
    out.set(bdf, { uuid: element(body, "uuid"), migEnabled: current !== null && /^enabled$/i.test(current), devices });
  }
  return out;
}

/** `nvidia-smi -L`. */
export function parseListGpus(text: string): ListedGpu[] {
  const gpus: ListedGpu[] = [];
  for (const line of text.split("\n")) {
    const gpu = /^\s*GPU (\d+): .*\(UUID: (GPU-[0-9a-fA-F-]+)\)\s*$/.exec(line);
    if (gpu) {
      gpus.push({ index: Number(gpu[1]), uuid: gpu[2]!, migDevices: new Map() });
      continue;
    }
    const mig = /^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[0-9a-fA-F-]+)\)\s*$/.exec(line);
    if (mig) {
      const owner = gpus.at(-1);
      if (!owner) throw new Error(`nvidia-smi -L: a MIG device before any GPU: ${line.trim()}`);
      owner.migDevices.set(Number(mig[2]), { profile: mig[1]!, uuid: mig[3]! });
    } else if (/\bMIG\b/.test(line)) {
      throw new Error(`nvidia-smi -L: unreadable MIG line: ${line.trim()}`);
    }
  }
  return gpus;
}

/** The table rows (`|   0  MIG ...   |`) of an nvidia-smi mig listing, without the bars. */
function rows(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => /^\|\s+\d/.test(l))
    .map((l) => l.replace(/^\|/, "").replace(/\|\s*$/, "").trim());
}

/** `nvidia-smi mig -lgip`: the first line of each profile (the second holds CE/JPEG/OFA counts). */
export function parseGiProfiles(text: string): GiProfile[] {
  const out: GiProfile[] = [];
  for (const row of rows(text)) {
    if (!/\bMIG\b/.test(row)) continue; // the engine counts line under each profile
    const m = /^(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\/(\d+)\s+([\d.]+)\s+(?:Yes|No)\s+(\d+)\s+\d+\s+\d+$/.exec(row);
    if (!m) throw new Error(`nvidia-smi mig -lgip: unreadable profile row: ${row}`);
    out.push({ gpu: Number(m[1]), name: m[2]!, id: Number(m[3]), free: Number(m[4]), total: Number(m[5]), memoryGiB: Number(m[6]), sm: Number(m[7]) });
  }
  return out;
}

/** `nvidia-smi mig -lgipp`. */
export function parseGiPlacements(text: string): GiPlacements[] {
  const out: GiPlacements[] = [];
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const m = /^GPU\s+(\d+)\s+Profile ID\s+(\d+)\s+Placements?\s*:\s*\{([\d,]+)\}:(\d+)$/.exec(line);
    if (!m) throw new Error(`nvidia-smi mig -lgipp: unreadable line: ${line}`);
    out.push({ gpu: Number(m[1]), profileId: Number(m[2]), starts: m[3]!.split(",").map(Number), size: Number(m[4]) });
  }
  return out;
}

const NONE_FOUND = /No (?:GPU|compute) instances found/;

/** `nvidia-smi mig -lgi` (or its "No GPU instances found" answer). */
export function parseGpuInstances(text: string): GpuInstance[] {
  if (NONE_FOUND.test(text)) return [];
  return rows(text).map((row) => {
    const m = /^(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+):(\d+)$/.exec(row);
    if (!m) throw new Error(`nvidia-smi mig -lgi: unreadable row: ${row}`);
    return { gpu: Number(m[1]), name: m[2]!, profileId: Number(m[3]), id: Number(m[4]), start: Number(m[5]), size: Number(m[6]) };
  });
}

/** `nvidia-smi mig -lci` (or its "No compute instances found" answer). */
export function parseComputeInstances(text: string): ComputeInstance[] {
  if (NONE_FOUND.test(text)) return [];
  return rows(text).map((row) => {
    const m = /^(\d+)\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)$/.exec(row);
    if (!m) throw new Error(`nvidia-smi mig -lci: unreadable row: ${row}`);
    return { gpu: Number(m[1]), gpuInstanceId: Number(m[2]), name: m[3]!, profileId: Number(m[4]), id: Number(m[5]) };
  });
}

/** The GPU instance `nvidia-smi mig -cgi` says it made ("Successfully created GPU instance ID  7 on GPU  0 ..."), or null. */
export function parseCreatedGpuInstance(text: string): number | null {
  const m = /Successfully created GPU instance ID\s+(\d+)\s+on GPU\s+\d+/.exec(text);
  return m ? Number(m[1]) : null;
}

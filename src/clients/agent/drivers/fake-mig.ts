/**
 * A fake partitionable GPU for demos, tests and benchmarks on hosts without one: `fake-mig`
 * reports GPUs shaped like an H100 80GB in MIG mode (7 compute slices, 8 memory slices, the
 * GPU-instance profiles and placements `nvidia-smi mig -lgip` / `-lgipp` list for it), and its
 * partitioner makes and destroys MIG-like partitions as nvidia-smi would: it refuses a placement
 * that overlaps one that exists, and a made partition is listed by the next discovery. What exists
 * is kept in this process's memory (or the --fake-state file's sibling `<file>.mig.json`).
 */
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import type { DriverPartition, DriverPartitioning, DriverPartitionProfile, SlotPlacement } from "../../../domain/inventory/partitioning-report.js";
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { Driver, DriverEnv, Partitioner } from "./driver.js";

export const FAKE_MIG_DRIVER_NAME = "fake_mig";
const BUS_BASE = 0x40;

function profile(name: string, toolId: string, compute: number, starts: number[], size: number, max: number): DriverPartitionProfile {
  const rc = `CUSTOM_MIG_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
  return { name, toolId, resourceClass: rc, consumes: [{ counter: "compute", amount: compute }], placements: starts.map((start) => ({ start, size })), maxInstances: max };
}

/** An H100 80GB's GPU-instance profiles: id, compute slices, placements (start:size) and the most at once. */
export const H100_PROFILES: readonly DriverPartitionProfile[] = [
  profile("1g.10gb", "19", 1, [0, 1, 2, 3, 4, 5, 6], 1, 7),
  profile("1g.20gb", "15", 1, [0, 2, 4, 6], 2, 4),
  profile("2g.20gb", "14", 2, [0, 2, 4], 2, 3),
  profile("3g.40gb", "9", 3, [0, 4], 4, 2),
  profile("4g.40gb", "5", 4, [0], 4, 1),
  profile("7g.80gb", "0", 7, [0], 8, 1),
];

type MigState = Record<string, DriverPartition[]>;
const memory = new Map<string, MigState>();

function stateFile(env: DriverEnv): string | undefined {
  const f = env.config.fake?.stateFile;
  return f ? `${f}.mig.json` : undefined;
}

function load(env: DriverEnv): MigState {
  const file = stateFile(env);
  if (!file) return memory.get(env.hostname) ?? {};
  try {
    return JSON.parse(readFileSync(file, "utf8")) as MigState;
  } catch {
    return {};
  }
}

function save(env: DriverEnv, state: MigState): void {
  const file = stateFile(env);
  if (file) writeFileSync(file, JSON.stringify(state, null, 2));
  else memory.set(env.hostname, state);
}

function bdfOfGpu(i: number): string {
  return `0000:${(BUS_BASE + i).toString(16).padStart(2, "0")}:00.0`;
}

function gpuIndexOf(controlPath: Record<string, unknown>): number {
  return Number.parseInt(String(controlPath["bus"]), 16) - BUS_BASE;
}

function partitioning(parts: DriverPartition[]): DriverPartitioning {
  return { driverName: FAKE_MIG_DRIVER_NAME, counters: [{ name: "compute", total: 7 }], slots: 8, oneProfileAtATime: false, profiles: [...H100_PROFILES], partitions: parts };
}

const overlaps = (a: SlotPlacement, b: SlotPlacement) => a.start < b.start + b.size && b.start < a.start + a.size;

export const fakeMigPartitioner: Partitioner = {
  driverNames: [FAKE_MIG_DRIVER_NAME],
  async create(env, target) {
    const gpu = gpuIndexOf(target.controlPath);
    const command = ["fake-nvidia-smi", "mig", "-i", String(gpu), "-cgi", `${target.profile.toolId}${target.placement ? `:${target.placement.start}` : ""}`, "-C"];
    const cfg = env.config.fakeMig;
    if (cfg?.createDelayMs) await new Promise((r) => setTimeout(r, cfg.createDelayMs));
    if (cfg?.createFailure) throw new Error(cfg.createFailure);
    const state = load(env);
    const key = bdfOfGpu(gpu);
    const parts = state[key] ?? [];
    const placement = target.placement;
    if (!H100_PROFILES.some((p) => p.toolId === target.profile.toolId)) throw new Error(`Unable to create a GPU instance on GPU ${gpu} using profile ${target.profile.toolId}: Invalid Argument`);
    if (placement && parts.some((p) => p.placement && overlaps(p.placement, placement))) throw new Error(`Unable to create a GPU instance on GPU ${gpu} using profile ${target.profile.toolId}: Insufficient Resources`);
    const uuid = `MIG-${randomUUID()}`;
    const giId = Math.max(0, ...parts.map((p) => Number(p.toolRef["gpuInstanceId"]))) + 1;
    const partition: DriverPartition = {
      profile: target.profile.name,
      uuid,
      placement,
      toolRef: { gpu, gpuInstanceId: giId, computeInstanceId: 0 },
      attachHandle: { type: "MIG", info: { uuid, gpu_bdf: key, gpu_instance_id: giId, compute_instance_id: 0 } },
    };
    state[key] = [...parts, partition];
    save(env, state);
    return { command, partition };
  },
  async destroy(env, target) {
    const gpu = gpuIndexOf(target.controlPath);
    const state = load(env);
    const key = bdfOfGpu(gpu);
    const parts = state[key] ?? [];
    if (!parts.some((p) => p.uuid === target.uuid)) return { command: [] };
    state[key] = parts.filter((p) => p.uuid !== target.uuid);
    save(env, state);
    const gi = String(target.toolRef["gpuInstanceId"] ?? "");
    return { command: ["fake-nvidia-smi", "mig", "-i", String(gpu), "-gi", gi, "-dci", "&&", "fake-nvidia-smi", "mig", "-i", String(gpu), "-gi", gi, "-dgi"] };
  },
};

export const fakeMigDriver: Driver = {
  name: "fake-mig",
  partitioner: fakeMigPartitioner,
  async discover(env): Promise<DriverDevice[]> {
    const state = load(env);
    const gpus = env.config.fakeMig?.gpus ?? 1;
    return Array.from({ length: gpus }, (_, i) => {
      const bdf = bdfOfGpu(i);
      const [domain, bus, rest] = bdf.split(":") as [string, string, string];
      const [device, fn] = rest.split(".") as [string, string];
      return {
        type: "GPU" as const,
        vendor: "10de",
        model: "Fake H100 80GB HBM3 (MIG)",
        stdBoardInfo: { product_id: "2330" },
        vendorBoardInfo: null,
        controlPath: { type: "PCI", info: { domain, bus, device, function: fn } },
        partitioning: partitioning(state[bdf] ?? []),
        deployables: [],
      };
    });
  },
};

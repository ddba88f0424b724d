/**
 * bench:projections: rebuild every read model from a log of >= 1,000,000 events, into Redis and
 * into memory.
 *
 *   npm run bench:projections                       # 1,000 hosts x 8 devices, 200,000 ARQs, 3 runs each
 *   npm run bench:projections -- --hosts 100 --arqs 20000 --runs 1 --no-results   # a quick run
 *   options: --batch N (events per store write), --only redis|memory, --runs N
 *
 * The log is generated straight into a MemoryEventStore (the read side is what is measured):
 * each host reports 8 devices (DeviceDiscovered, DeployableAdded, 2-3 AttributeSet,
 * AttachHandleAdded each), then ARQs go through create, bind-started, allocate + bound,
 * unbind + release, delete, in waves of 4,000 ARQs at a time. Progress goes to stderr; the last
 * line on stdout is `BENCH {json}`. Results are recorded in bench/RESULTS.md.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { Redis } from "ioredis";
import type { DomainEvent } from "../src/domain/events.js";
import { stream } from "../src/domain/shared/types.js";
import { MemoryEventStore } from "../src/infra/eventstore/memory.js";
import type { EventMetadata, NewEvent } from "../src/infra/eventstore/port.js";
import { projections } from "../projections/index.js";
import { MemoryReadStore } from "../src/infra/readstore/memory.js";
import type { ReadStore } from "../src/infra/readstore/port.js";
import { listArqs } from "../projections/arqs/queries.js";
import { listProfiles } from "../projections/device-profiles/queries.js";
import { listDevices } from "../projections/device-tree/queries.js";
import { listResourceProviders } from "../projections/resource-providers/queries.js";
import { RedisReadStore } from "../src/infra/readstore/redis.js";
import { Projector } from "../src/reactors/projector/projector.js";
import type { RebuildProgress } from "../src/reactors/projector/rebuild.js";
import { startRedisServer } from "./lib/redis-server.js";
import { runAsEntryPoint } from "./lib/tuned-entry.js";

interface Args {
  hosts: number;
  devicesPerHost: number;
  arqs: number;
  wave: number;
  batch: number;
  runs: number;
  results: boolean;
  only?: "redis" | "memory";
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { hosts: 1000, devicesPerHost: 8, arqs: 200_000, wave: 4000, batch: 2000, runs: 3, results: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v <= 0) throw new Error(`${a} needs a positive integer`);
      return v;
    };
    if (a === "--hosts") args.hosts = num();
    else if (a === "--devices") args.devicesPerHost = num();
    else if (a === "--arqs") args.arqs = num();
    else if (a === "--wave") args.wave = num();
    else if (a === "--batch") args.batch = num();
    else if (a === "--runs") args.runs = num();
    else if (a === "--no-results") args.results = false;
    else if (a === "--only") {
      const v = argv[++i];
      if (v !== "redis" && v !== "memory") throw new Error("--only takes redis or memory");
      args.only = v;
      args.results = false;
    }
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const at = (s: number) => new Date(Date.UTC(2026, 10, 22) + s * 1000).toISOString();
const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");
/** Deterministic uuid-shaped ids (kind, number): cheap and unique. */
const id = (kind: number, n: number) => `${hex(kind, 8)}-0000-4000-8000-${hex(n, 12)}`;

interface Slot {
  host: string;
  device: string;
  deployable: string;
  handle: string;
  info: { domain: string; bus: string; device: string; function: string };
}

/** Appends the whole log; returns the number of events. */
export async function generate(es: MemoryEventStore, args: Args): Promise<number> {
  const meta: EventMetadata = { principal: "bench", correlationId: "bench", causationId: "bench", at: at(0) };
  const toNew = (e: DomainEvent): NewEvent => ({ id: randomUUID(), type: e.type, data: e.data, metadata: meta });
  let appended = 0;
  const put = async (s: string, events: DomainEvent[]) => {
    await es.append(s, events.map(toNew), "any");
    appended += events.length;
  };

  await put(stream.deviceProfile("gpu"), [
    { type: "DeviceProfileCreated", data: { uuid: id(1, 1), name: "gpu", description: "bench", groups: [{ "resources:PGPU": "1" }], createdAt: at(0) } },
  ]);

  const slots: Slot[] = [];
  for (let h = 0; h < args.hosts; h++) {
    const host = `compute-${String(h).padStart(5, "0")}`;
    const events: DomainEvent[] = [];
    for (let d = 0; d < args.devicesPerHost; d++) {
      const n = h * args.devicesPerHost + d;
      const bus = hex(0x10 + d, 2);
      const info = { domain: "0000", bus, device: "00", function: "0" };
      const slot: Slot = { host, device: id(2, n), deployable: id(3, n), handle: id(4, n), info };
      slots.push(slot);
      const fpga = d % 4 === 3;
      events.push(
        {
          type: "DeviceDiscovered",
          data: {
            hostname: host,
            deviceUuid: slot.device,
            type: fpga ? "FPGA" : "GPU",
            vendor: fpga ? "8086" : "10de",
            model: fpga ? "PAC Arria10" : "A100",
            stdBoardInfo: { class: fpga ? "1200" : "0302", device_id: fpga ? "09c4" : "20b0" },
            vendorBoardInfo: null,
            controlPath: { uuid: id(5, n), type: "PCI", info },
            status: "ENABLED",
            at: at(1),
          },
        },
        {
          type: "DeployableAdded",
          data: {
            hostname: host,
            deviceUuid: slot.device,
            deployableUuid: slot.deployable,
            name: `${host}_0000:${bus}:00.0`,
            numAccelerators: 1,
            driverName: fpga ? "intel_fpga" : "nvidia_gpu",
            parentUuid: null,
            rootUuid: slot.deployable,
            rpUuid: id(6, n),
            bitstreamId: null,
            at: at(1),
          },
        },
        { type: "AttributeSet", data: { hostname: host, deployableUuid: slot.deployable, attributeUuid: id(7, n * 3), key: "rc", value: fpga ? "FPGA" : "PGPU", at: at(1) } },
        { type: "AttributeSet", data: { hostname: host, deployableUuid: slot.deployable, attributeUuid: id(7, n * 3 + 1), key: "trait0", value: fpga ? "CUSTOM_FPGA_INTEL" : "CUSTOM_GPU_NVIDIA", at: at(1) } },
      );
      if (d % 2 === 0) {
        events.push({ type: "AttributeSet", data: { hostname: host, deployableUuid: slot.deployable, attributeUuid: id(7, n * 3 + 2), key: "trait1", value: "CUSTOM_PRODUCT_ID", at: at(1) } });
      }
      events.push({
        type: "AttachHandleAdded",
        data: { hostname: host, deviceUuid: slot.device, deployableUuid: slot.deployable, handleUuid: slot.handle, handleType: "PCI", info, at: at(1) },
      });
    }
    await put(stream.host(host), events);
  }
  log(`  inventory: ${args.hosts} hosts, ${slots.length} devices, ${appended} events`);

  const wave = Math.min(args.wave, slots.length);
  for (let start = 0; start < args.arqs; start += wave) {
    const n = Math.min(wave, args.arqs - start);
    const arqs = Array.from({ length: n }, (_, i) => ({ uuid: id(8, start + i), instance: id(9, start + i), slot: slots[(start + i) % slots.length]! }));
    const t = (s: number) => at(100 + start / wave + s);
    for (const a of arqs) {
      await put(stream.arq(a.uuid), [
        {
          type: "ArqCreated",
          data: { arqUuid: a.uuid, deviceProfileName: "gpu", deviceProfileUuid: id(1, 1), deviceProfileGroupId: 0, group: { "resources:PGPU": "1" }, projectId: "bench", at: t(0) },
        },
      ]);
    }
    for (const a of arqs) {
      await put(stream.arq(a.uuid), [
        { type: "ArqBindStarted", data: { arqUuid: a.uuid, hostname: a.slot.host, deviceRpUuid: id(6, 0), instanceUuid: a.instance, projectId: "bench", at: t(1) } },
      ]);
    }
    for (const a of arqs) {
      const s = a.slot;
      await put(stream.host(s.host), [
        {
          type: "AttachHandleAllocated",
          data: { hostname: s.host, deviceUuid: s.device, deployableUuid: s.deployable, rpUuid: id(6, 0), handleUuid: s.handle, handleType: "PCI", info: s.info, arqUuid: a.uuid, instanceUuid: a.instance, at: t(2) },
        },
      ]);
      await put(stream.arq(a.uuid), [
        {
          type: "ArqBound",
          data: { arqUuid: a.uuid, hostname: s.host, instanceUuid: a.instance, deviceRpUuid: id(6, 0), deployableUuid: s.deployable, attachHandleUuid: s.handle, attachHandleType: "PCI", attachHandleInfo: s.info, at: t(2) },
        },
      ]);
    }
    for (const a of arqs) {
      const s = a.slot;
      await put(stream.arq(a.uuid), [
        { type: "ArqUnbound", data: { arqUuid: a.uuid, previousHostname: s.host, previousInstanceUuid: a.instance, releasedHandleUuid: s.handle, at: t(3) } },
      ]);
      await put(stream.host(s.host), [{ type: "AttachHandleReleased", data: { hostname: s.host, deployableUuid: s.deployable, handleUuid: s.handle, arqUuid: a.uuid, at: t(3) } }]);
    }
    for (const a of arqs) {
      await put(stream.arq(a.uuid), [
        {
          type: "ArqDeleted",
          data: { arqUuid: a.uuid, deviceProfileName: "gpu", deviceProfileUuid: id(1, 1), previousHostname: null, previousInstanceUuid: null, releasedHandleUuid: null, at: t(4) },
        },
      ]);
    }
    if ((start / wave) % 10 === 0) log(`  arqs: ${start + n}/${args.arqs} (${appended} events)`);
  }
  return appended;
}

interface RebuildFigures {
  seconds: number;
  nodeCpuSeconds: number;
  /** Share of the time node's main thread was busy (event loop utilization). */
  busy: number;
}

async function rebuild(label: string, es: MemoryEventStore, store: ReadStore, batch: number): Promise<RebuildFigures> {
  // Collect what generating the log left behind, so the rebuild is not charged for it.
  (globalThis as { gc?: () => void }).gc?.();
  const projector = new Projector({ events: es, store, projections, rebuildBatchSize: batch });
  let lastLog = 0;
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const started = performance.now();
  await projector.rebuild(undefined, (p: RebuildProgress) => {
    if (p.elapsedMs - lastLog < 1000) return;
    lastLog = p.elapsedMs;
    log(`  ${label}: ${p.events} events, ${Math.round(p.events / (p.elapsedMs / 1000))} events/s`);
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const nodeCpuSeconds = (cpu.user + cpu.system) / 1e6;
  log(`  ${label}: ${seconds.toFixed(2)} s, node CPU ${nodeCpuSeconds.toFixed(2)} s, event loop busy ${(elu.utilization * 100).toFixed(0)}%`);
  return { seconds, nodeCpuSeconds, busy: elu.utilization };
}

/** The rebuilt models answer as the log says: everything deleted, every device and RP there. */
async function check(label: string, store: ReadStore, args: Args): Promise<void> {
  const devices = await listDevices(store, {}, 1);
  const arqs = await listArqs(store, {}, 1);
  const rps = await listResourceProviders(store, "compute-00000");
  const profiles = await listProfiles(store);
  const expectDevices = args.hosts * args.devicesPerHost;
  const problems = [
    devices.totalCount !== expectDevices && `devices ${devices.totalCount} != ${expectDevices}`,
    arqs.totalCount !== 0 && `arqs ${arqs.totalCount} != 0`,
    rps.length !== args.devicesPerHost && `RPs of compute-00000 ${rps.length}`,
    rps.some((rp) => rp.used !== 0) && "an RP still has used > 0",
    profiles.length !== 1 && `profiles ${profiles.length}`,
  ].filter(Boolean);
  if (problems.length) throw new Error(`${label}: wrong read models: ${problems.join("; ")}`);
}

function serverCpu(info: string): number {
  return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0);
}

/** The run with the median duration (the middle one of an odd number of runs). */
function median<T extends RebuildFigures>(runs: T[]): T | undefined {
  return [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor((runs.length - 1) / 2)];
}

function machine() {
  const cpu = cpus()[0]?.model.trim() ?? "unknown";
  return { nproc: cpus().length, memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10, cpu, node: process.version };
}

function recordResults(section: string): void {
  const file = new URL("../../bench/RESULTS.md", import.meta.url);
  const heading = "## Projections (bench:projections)";
  let text = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmark results\n";
  const startIdx = text.indexOf(heading);
  if (startIdx >= 0) {
    // Re-running replaces this section, not the others.
    const next = text.indexOf("\n## ", startIdx + heading.length);
    text = text.slice(0, startIdx) + (next >= 0 ? text.slice(next + 1) : "");
  }
  text = `${text.trimEnd()}\n\n${section.trim()}\n`;
  writeFileSync(file, text);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  log(`generating the log: ${args.hosts} hosts x ${args.devicesPerHost} devices, ${args.arqs} ARQs`);
  const es = new MemoryEventStore();
  const genStart = performance.now();
  const events = await generate(es, args);
  log(`  ${events} events in ${((performance.now() - genStart) / 1000).toFixed(1)} s`);
  if (events < 1_000_000 && args.arqs >= 200_000) throw new Error(`only ${events} events`);

  // The machine is shared (2 vCPUs, other jobs): each target is rebuilt `runs` times, the median counts.
  const redisRuns: Array<RebuildFigures & { serverCpuSeconds: number }> = [];
  let redisMemory = "";
  if (args.only !== "memory") {
    const redis = await startRedisServer();
    try {
      const client = new Redis(redis.url);
      const store = new RedisReadStore(client);
      log(`rebuilding into Redis (${redis.url}, pid ${redis.pid}), ${args.runs} times`);
      for (let run = 0; run < args.runs; run++) {
        const cpuBefore = serverCpu(await client.info("cpu"));
        const figures = await rebuild("redis", es, store, args.batch);
        const serverCpuSeconds = serverCpu(await client.info("cpu")) - cpuBefore;
        log(`  redis-server CPU ${serverCpuSeconds.toFixed(2)} s`);
        redisRuns.push({ ...figures, serverCpuSeconds });
        await check("redis", store, args);
      }
      const info = await client.info("all");
      redisMemory = /used_memory_human:(\S+)/.exec(info)?.[1] ?? "";
      if (process.env.BENCH_VERBOSE) log(info.split("\n").filter((l) => l.startsWith("cmdstat_")).join("\n"));
      client.disconnect();
    } finally {
      await redis.stop();
    }
  }

  const memoryRuns: RebuildFigures[] = [];
  if (args.only !== "redis") {
    log(`rebuilding into memory, ${args.runs} times`);
    for (let run = 0; run < args.runs; run++) {
      const mem = new MemoryReadStore();
      memoryRuns.push(await rebuild("memory", es, mem, args.batch));
      await check("memory", mem, args);
    }
  }

  const redisMedian = median(redisRuns);
  const memoryMedian = median(memoryRuns);
  const rate = (r: RebuildFigures | undefined) => (r ? Math.round(events / r.seconds) : null);
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  const result = {
    events,
    redis_events_per_s: rate(redisMedian),
    memory_events_per_s: rate(memoryMedian),
    peak_rss_mb: peakRssMb,
  };
  const m = machine();
  const us = (cpuSeconds: number | undefined) => (cpuSeconds !== undefined && Number.isFinite(cpuSeconds) ? `${((cpuSeconds / events) * 1e6).toFixed(1)} µs` : "-");
  const all = (runs: RebuildFigures[]) => runs.map((r) => `${Math.round(events / r.seconds / 1000)}k`).join(", ");
  log(`redis: ${all(redisRuns)} events/s; memory: ${all(memoryRuns)} events/s; peak RSS ${peakRssMb} MB, redis used_memory ${redisMemory}`);

  if (args.results) {
    recordResults(`
## Projections (bench:projections)

Rebuild of all five read models (device-tree, deployables, arqs, device-profiles,
resource-providers) from a log generated into a MemoryEventStore: ${args.hosts} hosts x
${args.devicesPerHost} devices (DeviceDiscovered, DeployableAdded, 2-3 AttributeSet, AttachHandleAdded
each), then ${args.arqs} ARQs through create, bind-started, allocate + bound, unbind + release,
delete (waves of ${args.wave}). Batches of ${args.batch} events, one Lua call per projection per batch
(writes + checkpoint, atomic), three batches in flight.

| target | events | median seconds | median events/s | all runs (events/s) | node CPU per event | redis-server CPU per event |
|---|---|---|---|---|---|---|
| Redis 7 (throwaway redis-server on loopback) | ${events} | ${redisMedian?.seconds.toFixed(2)} | ${result.redis_events_per_s} | ${all(redisRuns)} | ${us(redisMedian?.nodeCpuSeconds)} | ${us(redisMedian?.serverCpuSeconds)} |
| memory (embedded mode) | ${events} | ${memoryMedian?.seconds.toFixed(2)} | ${result.memory_events_per_s} | ${all(memoryRuns)} | ${us(memoryMedian?.nodeCpuSeconds)} | - |

Target >= 100,000 events/s into Redis: ${(result.redis_events_per_s ?? 0) >= 100_000 ? "reached" : "not reached on this machine"} (median ${Math.round((result.redis_events_per_s ?? 0) / 1000)}k, best ${redisRuns.length ? Math.round(Math.max(...redisRuns.map((r) => events / r.seconds)) / 1000) : "-"}k).
CPU per event is process CPU time (all threads, GC included) divided by the events in the log, for
the median run. During it node's main thread was busy ${((redisMedian?.busy ?? 0) * 100).toFixed(0)}% of the time: ${
      (redisMedian?.busy ?? 0) >= 0.95
        ? "the rebuild into\nRedis is bound by node (projecting, combining writes per key, encoding), not by Redis, whose"
        : "node also waits for\nRedis (both take turns on the shared cores); redis-server's"
    }
server CPU alone would allow ~${redisMedian ? Math.round(events / redisMedian.serverCpuSeconds / 1000) : "-"}k events/s on a core of its own. Node and redis-server share
the ${m.nproc} vCPUs (with whatever else runs on the machine), so their CPU per event added up caps the
rebuild near ${redisMedian ? Math.round((m.nproc * events) / (redisMedian.nodeCpuSeconds + redisMedian.serverCpuSeconds) / 1000) : "-"}k events/s here.

Peak RSS of the benchmark process: ${peakRssMb} MB (it holds the whole log in memory, and then the
in-memory read models). Redis used_memory after the rebuild: ${redisMemory}.

- Date: 2026-11-22
- Machine: ${m.nproc} vCPU (${m.cpu}), ${m.memoryGb} GB RAM, Node ${m.node}; node runs with
  \`${process.execArgv.join(" ") || "default flags"}\` (a 64 MB young generation is the projector's recommended
  setting; --expose-gc only lets the benchmark collect the generator's garbage before each rebuild)
- Reproduce: \`npm run bench:projections\` (quick: \`npm run bench:projections -- --hosts 100 --arqs 20000 --runs 1 --no-results\`)
`);
    log("recorded in bench/RESULTS.md");
  }
  process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
}

runAsEntryPoint(import.meta.url, main);

/**
 * bench:audit: the audit tools on the embedded log.
 *
 *   npm run bench:audit                                   # 1,000 hosts x 8 devices, 200,000 ARQs, + a 100,000-event host
 *   npm run bench:audit -- --hosts 100 --arqs 20000 --asof-events 20000 --queries 100   # a quick run
 *
 * - The log of bench:projections (generated in memory) is imported into a fresh LMDB store
 *   (audit import: a transaction per 1000 events, every hash checked), then one more host is
 *   appended: 64 devices, 4 attach handles each, then allocations and releases until its stream
 *   holds --asof-events events.
 * - verify: `audit verify` over the whole log (every hash recomputed, every checkpoint compared),
 *   on all cores as the CLI runs it, then in one thread.
 * - export: `audit export` of the whole log as NDJSON to /dev/null.
 * - replay: `replay --until` into a throwaway Redis, up to 90% of the log, as the CLI runs it in
 *   Redis mode (every read model but the audit index, whose past is the live one cut at the
 *   point: src/audit/past-index.ts), then with every read model (embedded mode, the audit index
 *   built too; replay_all_models_events_per_s).
 * - asOf: that host's device tree (devices with deployables and handles) asked over HTTP of a
 *   read-only API at --queries random positions of its stream, one at a time; the first query,
 *   at the head, folds the whole stream (reported apart as asof_cold_ms), then snapshots bound
 *   each fold to 256 events.
 * Progress goes to stderr; the last line on stdout is `BENCH {json}`.
 */
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { projections } from "../projections/index.js";
import { TokenRegistry } from "../src/api/auth/tokens.js";
import { exportLog, importLog } from "../src/audit/export.js";
import { replayInto } from "../src/audit/replay.js";
import { verifyLog } from "../src/audit/verify.js";
import { verifyLmdbParallel } from "../src/audit/verify-parallel.js";
import { loadConfig } from "../src/infra/config.js";
import type { DomainEvent } from "../src/domain/events.js";
import { stream } from "../src/domain/shared/types.js";
import { LmdbEventStore } from "../src/infra/eventstore/lmdb.js";
import { MemoryEventStore } from "../src/infra/eventstore/memory.js";
import type { EventStore, NewEvent, RecordedEvent } from "../src/infra/eventstore/port.js";
import { createLogger } from "../src/infra/logger.js";
import { startService } from "../src/service/main.js";
import { RedisReadStore } from "../src/infra/readstore/redis.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { runAsEntryPoint } from "./lib/tuned-entry.js";
import { startRedisServer } from "./lib/redis-server.js";
import { generate, parseArgs as parseLogArgs } from "./projections.js";

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const perS = (n: number, ms: number) => Math.round(n / (ms / 1000));
const AT = "2026-11-24T14:03:00.000Z";
const META = { principal: "bench", correlationId: "bench", causationId: "bench", at: AT };

interface Args {
  logArgs: string[];
  asofEvents: number;
  asofDevices: number;
  queries: number;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { logArgs: ["--runs", "1", "--no-results"], asofEvents: 100_000, asofDevices: 64, queries: 300 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    const num = () => Number(argv[++i]);
    if (k === "--asof-events") a.asofEvents = num();
    else if (k === "--asof-devices") a.asofDevices = num();
    else if (k === "--queries") a.queries = num();
    else a.logArgs.push(k, argv[++i]!);
  }
  return a;
}

/** The memory store's log, a page at a time. */
async function* pages(es: EventStore): AsyncGenerator<RecordedEvent> {
  for (let after: bigint | undefined; ; ) {
    const page = await es.readAll({ after, maxCount: 5000 });
    if (page.length === 0) return;
    yield* page;
    after = page.at(-1)!.position;
  }
}

/** One host with `devices` devices of 4 handles, then allocations and releases up to `total` events. */
export async function appendBusyHost(store: EventStore, host: string, devices: number, total: number): Promise<void> {
  const hex = (n: number) => n.toString(16).padStart(12, "0");
  const uuid = (kind: number, n: number) => `${kind.toString(16).padStart(8, "0")}-0000-4000-8000-${hex(n)}`;
  const events: DomainEvent[] = [];
  const handles: Array<{ device: string; deployable: string; handle: string; info: Record<string, string> }> = [];
  for (let d = 0; d < devices; d++) {
    const device = uuid(0xa1, d);
    const deployable = uuid(0xa2, d);
    const bus = (0x10 + d).toString(16).padStart(2, "0");
    events.push(
      {
        type: "DeviceDiscovered",
        data: { hostname: host, deviceUuid: device, type: "GPU", vendor: "10de", model: "A100", stdBoardInfo: null, vendorBoardInfo: null, controlPath: { uuid: uuid(0xa3, d), type: "PCI", info: { domain: "0000", bus, device: "00", function: "0" } }, status: "ENABLED", at: AT },
      },
      { type: "DeployableAdded", data: { hostname: host, deviceUuid: device, deployableUuid: deployable, name: `${host}_${bus}`, numAccelerators: 4, driverName: "nvidia", parentUuid: null, rootUuid: deployable, rpUuid: uuid(0xa4, d), bitstreamId: null, at: AT } },
      { type: "AttributeSet", data: { hostname: host, deployableUuid: deployable, attributeUuid: uuid(0xa5, d), key: "rc", value: "PGPU", at: AT } },
    );
    for (let f = 0; f < 4; f++) {
      const h = { device, deployable, handle: uuid(0xa6, d * 4 + f), info: { domain: "0000", bus, device: "00", function: String(f) } };
      handles.push(h);
      events.push({ type: "AttachHandleAdded", data: { hostname: host, deviceUuid: device, deployableUuid: deployable, handleUuid: h.handle, handleType: "PCI", info: h.info, at: AT } });
    }
  }
  let written = 0;
  const flush = async () => {
    const batch: NewEvent[] = events.splice(0).map((e) => ({ id: crypto.randomUUID(), type: e.type, data: e.data, metadata: META }));
    await store.append(stream.host(host), batch, "any");
    written += batch.length;
  };
  for (let i = 0; written + events.length < total; i++) {
    const h = handles[i % handles.length]!;
    const arq = uuid(0xa7, i);
    if (i % 2 === 0) {
      events.push({ type: "AttachHandleAllocated", data: { hostname: host, deviceUuid: h.device, deployableUuid: h.deployable, rpUuid: uuid(0xa4, 0), handleUuid: h.handle, handleType: "PCI", info: h.info, arqUuid: arq, instanceUuid: uuid(0xa8, i), at: AT } });
    } else {
      const prev = handles[(i - 1) % handles.length]!;
      events.push({ type: "AttachHandleReleased", data: { hostname: host, deployableUuid: prev.deployable, handleUuid: prev.handle, arqUuid: uuid(0xa7, i - 1), at: AT } });
    }
    if (events.length >= 1000) await flush();
  }
  if (events.length) await flush();
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const logArgs = parseLogArgs(args.logArgs);
  const speed = machineSpeedMs();
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-bench-audit-"));
  const redis = await startRedisServer();
  try {
    log(`generating the log: ${logArgs.hosts} hosts x ${logArgs.devicesPerHost} devices, ${logArgs.arqs} ARQs`);
    let mem: MemoryEventStore | undefined = new MemoryEventStore();
    const generated = await generate(mem, logArgs);
    const store = await LmdbEventStore.open(join(dir, "events"));
    let t0 = performance.now();
    const imported = await importLog(store, pages(mem));
    const importMs = performance.now() - t0;
    mem = undefined;
    (globalThis as { gc?: () => void }).gc?.();
    log(`  imported ${imported.events} of ${generated} events into LMDB: ${perS(imported.events, importMs)} events/s`);

    const host = "asof-host";
    t0 = performance.now();
    await appendBusyHost(store, host, args.asofDevices, args.asofEvents);
    const [first] = await store.readStream(stream.host(host), { maxCount: 1 });
    const head = (await store.headPosition())!;
    const events = Number(head);
    log(`  host ${host}: ${args.asofDevices} devices, ${args.asofEvents} events in its stream (${((performance.now() - t0) / 1000).toFixed(1)} s); log: ${events} events`);

    // As `cyborg-es audit verify` runs on the embedded log: one range per core (worker threads).
    t0 = performance.now();
    const report = await verifyLmdbParallel(join(dir, "events"));
    const verifyMs = performance.now() - t0;
    if (!report.ok || report.events !== events) throw new Error(`verify: ${JSON.stringify(report.firstBreaks)}`);
    t0 = performance.now();
    const single = await verifyLog(store);
    const singleMs = performance.now() - t0;
    if (!single.ok) throw new Error("verify (one thread) disagrees");
    log(`verify: ${report.events} events, ${report.checkpoints} checkpoints, ${perS(report.events, verifyMs)} events/s (one thread: ${perS(report.events, singleMs)})`);

    t0 = performance.now();
    const sink = createWriteStream("/dev/null");
    const exported = await exportLog(store, sink);
    sink.end();
    await finished(sink);
    const exportMs = performance.now() - t0;
    log(`export: ${exported.events} events, ${perS(exported.events, exportMs)} events/s`);

    const point = (head * 9n) / 10n;
    const replayTimed = async (db: number, liveIndex: boolean) => {
      const target = new RedisReadStore(`${redis.url}/${db}`);
      const t = performance.now();
      await replayInto(store, target, projections, point, undefined, liveIndex);
      const ms = performance.now() - t;
      await target.close();
      return ms;
    };
    const replayMs = await replayTimed(2, true);
    log(`replay into Redis up to ${point} (Redis mode: the audit index is the live one's): ${perS(Number(point), replayMs)} events/s`);
    const replayAllMs = await replayTimed(3, false);
    log(`replay into Redis up to ${point} (every model, the audit index built too): ${perS(Number(point), replayAllMs)} events/s`);

    const config = { ...loadConfig({ PORT: "0", DATA_DIR: dir, LOG_LEVEL: "silent" }), roles: new Set(["api"] as const) };
    const tokens = new TokenRegistry([{ name: "auditor", token: "bench-auditor-token-0123456789", roles: ["admin"] }]);
    const api = await startService(config, createLogger("silent"), { tokens, store });
    const query = `query($asOf: String) { devices(filter: { hostname: "${host}" }, first: ${args.asofDevices}, asOf: $asOf) {
      totalCount nodes { uuid status asOf { position } deployables { name attachHandles { uuid inUse } } } } }`;
    const ask = async (asOf: string) => {
      const t = performance.now();
      const res = await fetch(api.url!, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer bench-auditor-token-0123456789" }, body: JSON.stringify({ query, variables: { asOf } }) });
      const body = (await res.json()) as { data?: { devices: { totalCount: number } }; errors?: unknown };
      if (!body.data || body.data.devices.totalCount !== args.asofDevices) throw new Error(`asOf ${asOf}: ${JSON.stringify(body.errors ?? body.data)}`);
      return performance.now() - t;
    };
    const coldMs = await ask(head.toString());
    const lo = Number(first!.position) + args.asofDevices * 7;
    const latencies: number[] = [];
    for (let i = 0; i < args.queries; i++) latencies.push(await ask(String(lo + Math.floor(Math.random() * (events - lo)))));
    latencies.sort((a, b) => a - b);
    await api.close();
    log(`asOf: cold ${coldMs.toFixed(0)} ms (the whole ${args.asofEvents}-event stream); ${args.queries} queries p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`);
    await store.close();

    const result = {
      events,
      asof_stream_events: args.asofEvents,
      asof_devices: args.asofDevices,
      asof_cold_ms: Math.round(coldMs),
      asof_p50_ms: Number(percentile(latencies, 50).toFixed(1)),
      asof_p99_ms: Number(percentile(latencies, 99).toFixed(1)),
      replay_events_per_s: perS(Number(point), replayMs),
      replay_all_models_events_per_s: perS(Number(point), replayAllMs),
      verify_events_per_s: perS(report.events, verifyMs),
      verify_one_thread_events_per_s: perS(report.events, singleMs),
      export_events_per_s: perS(exported.events, exportMs),
      import_events_per_s: perS(imported.events, importMs),
      machine_speed_ms: speed,
    };
    log(`machine: ${cpus().length} vCPU (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}; speed ${speed} ms`);
    process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

runAsEntryPoint(import.meta.url, main);

/**
 * bench:retention: a year of boots on the embedded log with retention, compressed in time.
 *
 *   npm run bench:retention                                         # 2,000 boots a day, 365 days, 90-day retention
 *   npm run bench:retention -- --boots-per-day 20 --days 60 --retention-days 15   # a quick run
 *
 * Each simulated day boots `--boots-per-day` VMs: an idempotency key claimed and answered, an ARQ
 * created, bound (its host stream allocates a handle), and, after a lifetime of 1 to 30 days,
 * unbound and deleted (the host releases the handle). Events go straight to the store in the
 * shapes the service writes; the audit index (the model that grows with the log) is projected
 * into LMDB beside it, as in the embedded mode. The store records real time, so a simulated day
 * is the stretch of real time it took: retention at day D archives what ended before day
 * D - retention-days began. Retention runs once a simulated day, and the audit index drops the
 * archived entries, as the service does.
 *
 * Host streams never end: every boot allocates and releases on one. They close their books as the
 * service does (docs/operations.md, "Retention"): once a host's period holds
 * `--host-period-events` events (default 1000; 0: never), a HostBooksClosed summary of a host of
 * 8 devices (as the decider encodes it) starts the next one, and retention archives the periods
 * that closed before the cutoff.
 *
 * Reported: live log and index bytes every 30 days (the LMDB files, and the pages their data uses:
 * the file keeps its high-water size, LMDB reuses the pages retention frees), live objects (ARQs and
 * idempotency keys not archived), bytes per live object, the steady-state total extrapolated to
 * 100,000 boots a day (bytes per live object x the live objects at that rate), archive bytes,
 * audit verify over archive + live (must pass), a changed archive byte (must be found), and
 * history of an archived ARQ against a live one. The last line on stdout is `BENCH {json}`.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projection as audit } from "../projections/audit/projection.js";
import { history } from "../src/audit/history.js";
import { encodeHostState } from "../src/domain/inventory/books.js";
import { hostDecider } from "../src/domain/inventory/decider.js";
import { diffHostReport } from "../src/domain/inventory/diff.js";
import { Archive } from "../src/audit/retention/archive.js";
import { ArchiveReadingStore, verifyWithArchive } from "../src/audit/retention/archived-log.js";
import { RetentionScheduler } from "../src/audit/retention/scheduler.js";
import { LmdbEventStore } from "../src/infra/eventstore/lmdb.js";
import type { AppendStep, NewEvent } from "../src/infra/eventstore/port.js";
import { createLogger } from "../src/infra/logger.js";
import { LmdbReadStore } from "../src/infra/readstore/lmdb.js";
import { Projector } from "../src/reactors/projector/projector.js";
import { lmdbUsedBytes } from "./lib/lmdb-used-bytes.js";

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const BOOTS = arg("boots-per-day", 2000);
const DAYS = arg("days", 365);
const RETENTION = arg("retention-days", 90);
const TARGET_BOOTS = 100_000;
const HOSTS = arg("hosts", 50);
const HOST_PERIOD = arg("host-period-events", 1000);

const meta = (c: string) => ({ principal: "nova", roles: ["service"], correlationId: c, causationId: c, at: new Date().toISOString(), project: "p-1" });
const ev = (type: string, data: unknown, c: string): NewEvent => ({ id: randomUUID(), type, data, metadata: meta(c) });
const dirBytes = (dir: string): number => readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);

interface Vm {
  arq: string;
  instance: string;
  handle: string;
  host: string;
  endsOn: number;
  request: string;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "bench-retention-"));
  const eventsDir = join(root, "events");
  const indexDir = join(root, "audit-index");
  const store = await LmdbEventStore.open(eventsDir);
  const index = await LmdbReadStore.open(indexDir);
  const projector = new Projector({ events: store, store: index, projections: [audit] });
  await projector.start();
  const archive = new Archive(join(root, "archive"), store.archiving);
  const dayStarts: number[] = [];
  let today = 0;
  const retention = new RetentionScheduler({ store, archive, days: 0, intervalMs: 86_400_000, index: projector, log: createLogger("silent"), now: () => new Date(dayStarts[Math.max(0, today - RETENTION)]!) });
  const vms: Vm[] = [];
  const samples: Array<{ day: number; log_file_bytes: number; index_file_bytes: number; log_used_bytes: number; index_used_bytes: number; live_events: number; live_objects: number; live_host_events: number }> = [];
  const startedAt = performance.now();
  for (today = 0; today < DAYS; today++) {
    dayStarts.push(Date.now());
    await bootDay(store, vms, today);
    await endDay(store, vms, today);
    await closeBooks(store);
    if (today >= RETENTION) await retention.runOnce();
    const head = (await store.headPosition())!;
    await projector.waitFor(head);
    if ((today + 1) % 30 === 0 || today === DAYS - 1) {
      const live = await liveCounts(store);
      samples.push({ day: today + 1, log_file_bytes: dirBytes(eventsDir), index_file_bytes: dirBytes(indexDir), log_used_bytes: lmdbUsedBytes(eventsDir), index_used_bytes: lmdbUsedBytes(indexDir), live_events: live.events, live_objects: live.objects, live_host_events: live.hostEvents });
      console.error(`day ${today + 1}: ${JSON.stringify(samples.at(-1))}`);
    }
  }
  const simulate_s = (performance.now() - startedAt) / 1000;
  const last = samples.at(-1)!;
  // Live objects: ARQs and idempotency keys still in the live log (running, or ended within the retention period).
  const liveObjects = last.live_objects;
  const bytesPerLiveObject = (last.log_used_bytes + last.index_used_bytes) / Math.max(1, liveObjects);
  const segments = await archive.segments();
  const archiveBytes = dirBytes(archive.dir);

  const reading = new ArchiveReadingStore(store, archive);
  const timed = async (uuid: string) => {
    const t = performance.now();
    const page = await history(reading, index, uuid, 50);
    return { ms: performance.now() - t, entries: page.items.length };
  };
  const liveHistory = await timed(vms.at(-1)!.arq);
  const archivedHistory = archivedArqs.length > 0 ? await timed(archivedArqs[0]!) : undefined;

  const verifyStart = performance.now();
  const verified = await verifyWithArchive(store, archive);
  const verify_s = (performance.now() - verifyStart) / 1000;
  let tamperFound: boolean | null = null;
  if (segments.length > 0) {
    const path = join(archive.dir, segments[0]!.file);
    const bytes = readFileSync(path);
    bytes[bytes.length >> 1]! ^= 0x01;
    writeFileSync(path, bytes);
    tamperFound = !(await verifyWithArchive(store, archive)).ok;
  }
  await projector.stop();
  await index.close();
  await store.close();
  rmSync(root, { recursive: true, force: true });
  const out = {
    boots_per_day: BOOTS,
    days: DAYS,
    retention_days: RETENTION,
    hosts: HOSTS,
    host_period_events: HOST_PERIOD,
    host_summary_bytes: SUMMARY_BYTES,
    host_summaries: summaries,
    live_host_events_per_host: Math.round(last.live_host_events / HOSTS),
    simulate_s: Number(simulate_s.toFixed(1)),
    samples,
    live_objects: liveObjects,
    bytes_per_live_object: Math.round(bytesPerLiveObject),
    steady_state_bytes_at_100k_boots_per_day: Math.round(bytesPerLiveObject * liveObjects * (TARGET_BOOTS / BOOTS)),
    archive_segments: segments.length,
    archive_bytes: archiveBytes,
    archived_events: segments.reduce((n, s) => n + s.events, 0),
    verify_ok: verified.ok,
    verify_events: verified.events,
    verify_s: Number(verify_s.toFixed(2)),
    tampered_archive_byte_found: tamperFound,
    history_live_ms: Number(liveHistory.ms.toFixed(1)),
    history_archived_ms: archivedHistory ? Number(archivedHistory.ms.toFixed(1)) : null,
    history_archived_entries: archivedHistory?.entries ?? null,
  };
  console.log(`BENCH ${JSON.stringify(out)}`);
}

const archivedArqs: string[] = [];

async function bootDay(store: LmdbEventStore, vms: Vm[], day: number): Promise<void> {
  for (let i = 0; i < BOOTS; i += 100) {
    const steps: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(BOOTS, i + 100); j++) {
      const vm: Vm = { arq: randomUUID(), instance: randomUUID(), handle: randomUUID(), host: `host-compute${j % HOSTS}`, endsOn: day + 1 + Math.floor(Math.random() * 30), request: randomUUID() };
      vms.push(vm);
      const key = randomUUID().replace(/-/g, "").padEnd(64, "0");
      const c = vm.request;
      const seq: AppendStep[] = [
        { stream: `idempotency-${key}`, events: [ev("IdempotencyKeyClaimed", { keyHash: key, fingerprint: "f", operation: "createArqs", expiresAt: new Date().toISOString(), at: new Date().toISOString() }, c)], expectedRevision: "no_stream" },
        { stream: `arq-${vm.arq}`, events: [ev("ArqCreated", { arqUuid: vm.arq, deviceProfileUuid: "profile-1", deviceProfileName: "fpga", deviceProfileGroupId: 0, projectId: "p-1" }, c), ev("ArqBindStarted", { arqUuid: vm.arq, instanceUuid: vm.instance, hostname: vm.host }, c), ev("ArqBound", { arqUuid: vm.arq, instanceUuid: vm.instance, attachHandleUuid: vm.handle, hostname: vm.host }, c)], expectedRevision: "no_stream" },
        { stream: vm.host, events: [ev("AttachHandleAllocated", { hostname: vm.host, attachHandleUuid: vm.handle, arqUuid: vm.arq }, c)], expectedRevision: "any" },
        { stream: `idempotency-${key}`, events: [ev("IdempotentAnswerRecorded", { keyHash: key, answer: { arqs: [vm.arq] }, at: new Date().toISOString() }, c)], expectedRevision: 0 },
      ];
      steps.push(store.appendSequence(seq));
      wroteToHost(vm.host);
    }
    await Promise.all(steps);
  }
}

async function endDay(store: LmdbEventStore, vms: Vm[], day: number): Promise<void> {
  const ending = vms.filter((v) => v.endsOn === day);
  const writes = ending.map((vm) => {
    const c = randomUUID();
    wroteToHost(vm.host);
    return store.appendSequence([
      { stream: `arq-${vm.arq}`, events: [ev("ArqUnbound", { arqUuid: vm.arq, instanceUuid: vm.instance }, c), ev("ArqDeleted", { arqUuid: vm.arq, deviceProfileUuid: "profile-1", previousInstanceUuid: vm.instance, releasedHandleUuid: vm.handle }, c)], expectedRevision: 2 },
      { stream: vm.host, events: [ev("AttachHandleReleased", { hostname: vm.host, attachHandleUuid: vm.handle, arqUuid: vm.arq }, c)], expectedRevision: "any" },
    ]);
  });
  await Promise.all(writes);
  if (archivedArqs.length === 0 && ending.length > 0) archivedArqs.push(ending[0]!.arq);
  const still = vms.filter((v) => v.endsOn !== day);
  vms.splice(0, vms.length, ...still);
}

async function liveCounts(store: LmdbEventStore): Promise<{ events: number; objects: number; hostEvents: number }> {
  let events = 0;
  let objects = 0;
  let hostEvents = 0;
  for (let after: bigint | undefined; ; ) {
    const page = await store.readAll({ after, maxCount: 10_000 });
    if (page.length === 0) break;
    events += page.length;
    objects += page.filter((e) => e.type === "ArqCreated" || (e.type === "IdempotencyKeyClaimed" && e.revision === 0)).length;
    hostEvents += page.filter((e) => e.stream.startsWith("host-")).length;
    after = page.at(-1)!.position;
  }
  return { events, objects, hostEvents };
}

/** A host of 8 FPGAs as the decider folds its report: what each summary carries. */
const SUMMARY_STATE = (() => {
  const pci = (bus: string, fn = "0") => ({ domain: "0000", bus, device: "00", function: fn });
  const devices = Array.from({ length: 8 }, (_, i) => {
    const bus = (0xa0 + i).toString(16);
    return {
      type: "FPGA",
      vendor: "0x8086",
      model: "PAC Arria10",
      stdBoardInfo: { product_id: "09c4" },
      controlPath: { type: "PCI", info: pci(bus) },
      deployables: [{ name: `compute_0000:${bus}:00.0`, numAccelerators: 1, driverName: "intel", attributes: [{ key: "rc", value: "FPGA" }, { key: "trait0", value: "CUSTOM_FPGA_INTEL" }], attachHandles: [{ type: "PCI", info: pci(bus) }] }],
    };
  });
  const at = new Date().toISOString();
  const state = diffHostReport(hostDecider.initialState(), "compute", devices, at).events.reduce(hostDecider.evolve, hostDecider.initialState());
  return encodeHostState(state);
})();
const SUMMARY_BYTES = Buffer.byteLength(JSON.stringify(SUMMARY_STATE));

/** Events written to each host since its period began. */
const sinceSummary = new Map<string, number>();
let summaries = 0;
const wroteToHost = (host: string) => sinceSummary.set(host, (sinceSummary.get(host) ?? 0) + 1);

/** The service's closing of the books, once a day: a summary on every host whose period is due. */
async function closeBooks(store: LmdbEventStore): Promise<void> {
  if (HOST_PERIOD <= 0) return;
  for (const [host, n] of sinceSummary) {
    if (n < HOST_PERIOD) continue;
    const [last] = await store.readStream(host, { direction: "backwards", maxCount: 1 });
    const at = new Date().toISOString();
    const data = { hostname: host.slice("host-".length), revision: last!.revision + 1, state: SUMMARY_STATE, at };
    await store.append(host, [{ id: randomUUID(), type: "HostBooksClosed", data, metadata: { principal: "system:host-books", correlationId: "books", causationId: "books", at } }], last!.revision);
    sinceSummary.set(host, 0);
    summaries++;
  }
}

await main();

/**
 * The device health loop's figures, in-process with an LMDB event log and Debian's real Placement
 * (uwsgi, 2 processes, sqlite) followed by the Placement sync:
 *
 * - taint_commit_p99_ms: from a taint asked of the application (the command a health rule or an
 *   operator issues) to its DeviceTainted committed on the host stream (fsync included).
 * - taint_to_reserved_p99_ms: from the same start to Placement's answer to the write that reserves
 *   the tainted device's provider (PUT .../inventories with reserved = total): the device is off
 *   the scheduler's menu from then on.
 * - eviction_notice_p99_ms: from a NoExecute taint on a device held by HOLDERS ARQs (`holders`) to
 *   each holder's eviction notice committed (bench/lib/eviction-phase.ts), over EVICTION_ROUNDS taints.
 *
 * HOSTS hosts x DEVICES FPGA cards are reported and synced first; then TAINTS taints, one every
 * 1/RATE s on a card that carries none, each removed again once Placement showed it (not measured).
 *
 *   npm run bench:health
 *   npm run bench:health -- --hosts 20 --devices 8 --taints 200 --rate 20 --holders 100 --eviction-rounds 10 [--no-fsync]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Application } from "../src/app/application.js";
import { rpUuidFor } from "../src/domain/inventory/ids.js";
import type { CommandContext } from "../src/domain/shared/types.js";
import { LmdbEventStore } from "../src/infra/eventstore/lmdb.js";
import { MemoryReadStore } from "../src/infra/readstore/memory.js";
import { createLogger } from "../src/infra/logger.js";
import { PlacementClient } from "../src/reactors/placement/client.js";
import { startPlacementSync } from "../src/reactors/placement/sync.js";
import { parseArgs } from "./lib/client.js";
import { evictionLatencies } from "./lib/eviction-phase.js";
import { fpgaCard, HostWriter } from "./lib/host-writer.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { startPlacementServer } from "./lib/placement-server.js";

const args = parseArgs(process.argv.slice(2));
const HOSTS = Number(args.hosts ?? 20);
const DEVICES = Number(args.devices ?? 8);
const TAINTS = Number(args.taints ?? 200);
const RATE = Number(args.rate ?? 20);
const CONCURRENCY = Number(args.concurrency ?? 4);
const FSYNC = args["no-fsync"] === undefined;
const HOLDERS = Number(args.holders ?? 100);
const EVICTION_ROUNDS = Number(args["eviction-rounds"] ?? 10);
const BUSES = ["3b", "3c", "5e", "5f", "86", "87", "af", "b0", "d8", "d9", "da", "db", "dc", "dd", "de", "df"].slice(0, DEVICES);

const host = (h: number) => `bench-host-${h}`;
const provider = (h: number, d: number) => rpUuidFor(`${host(h)}_0000:${BUSES[d]}:00.0`);
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
const ctx = (): CommandContext => ({ principal: "health:bench", correlationId: crypto.randomUUID(), causationId: crypto.randomUUID(), at: new Date().toISOString(), isAdmin: true });

interface Watch {
  t0: number;
  reserved: () => void;
}

async function main(): Promise<void> {
  const speedBefore = machineSpeedMs();
  const server = await startPlacementServer({ processes: 2, synchronous: FSYNC });
  const dir = mkdtempSync(join(tmpdir(), "bench-health-"));
  const store = await LmdbEventStore.open(join(dir, "events"));
  let sync: Awaited<ReturnType<typeof startPlacementSync>> | undefined;
  try {
    const log = createLogger(process.env.LOG_LEVEL ?? "warn");
    const admin = new PlacementClient({ url: server.url, token: server.token, concurrency: CONCURRENCY, retries: 10 });
    process.stderr.write(`Placement (${server.server}, 2 processes, sqlite synchronous=${FSYNC}) at ${server.url}; ${HOSTS} hosts x ${DEVICES} cards\n`);
    await Promise.all(Array.from({ length: HOSTS }, (_, h) => admin.createProvider({ uuid: crypto.randomUUID(), name: host(h), parentUuid: null })));

    // Which provider's reservation each taint waits for: resolved by the sync's write that shows it.
    const watching = new Map<string, Watch>();
    const client = new PlacementClient({
      url: server.url,
      token: server.token,
      concurrency: CONCURRENCY,
      onResponse: ({ method, path, status }) => {
        const m = /^\/resource_providers\/([0-9a-f-]{36})\/inventories$/.exec(path);
        if (method === "PUT" && status === 200 && m) watching.get(m[1]!)?.reserved();
      },
    });
    sync = await startPlacementSync({
      store,
      readStore: new MemoryReadStore(),
      config: { PLACEMENT_URL: server.url, PLACEMENT_TOKEN: server.token, PLACEMENT_MISSING_COMPUTE_NODE: "wait", PLACEMENT_RETRY_S: 30, PLACEMENT_CONCURRENCY: CONCURRENCY },
      log,
      tuning: { client },
    });
    const app = new Application({ store, newId: () => crypto.randomUUID() });
    const hosts = new HostWriter(store);
    await Promise.all(Array.from({ length: HOSTS }, (_, h) => hosts.report(host(h), BUSES.map((bus) => fpgaCard(host(h), bus)))));
    await sync.caughtUp(600_000);
    const deviceOf = new Map<string, string>();
    for (let h = 0; h < HOSTS; h++) for (let d = 0; d < DEVICES; d++) deviceOf.set(provider(h, d), await hosts.deviceAt(host(h), BUSES[d]!));
    process.stderr.write(`converged: ${HOSTS * DEVICES} providers in Placement\n`);

    const commits: number[] = [];
    const reserved: number[] = [];
    const s0 = performance.now();
    const inFlight: Array<Promise<void>> = [];
    for (let i = 0; i < TAINTS; i++) {
      const due = s0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      let h = Math.floor(Math.random() * HOSTS);
      let d = Math.floor(Math.random() * DEVICES);
      // Every card busy (a small run): wait for one to be freed rather than spin.
      while (watching.size >= HOSTS * DEVICES) await new Promise((r) => setTimeout(r, 5));
      while (watching.has(provider(h, d))) {
        h = Math.floor(Math.random() * HOSTS);
        d = Math.floor(Math.random() * DEVICES);
      }
      inFlight.push(taintOnce(h, d));
    }

    async function taintOnce(h: number, d: number): Promise<void> {
      const rp = provider(h, d);
      const deviceUuid = deviceOf.get(rp)!;
      const t0 = performance.now();
      const shown = new Promise<void>((resolve) => watching.set(rp, { t0, reserved: resolve }));
      await app.taintDevice(ctx(), host(h), deviceUuid, { key: "cyborg.openstack.org/health", effect: "NoSchedule", reason: "ECC uncorrectable errors past the threshold" });
      commits.push(performance.now() - t0);
      const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 30_000));
      if ((await Promise.race([shown, timeout])) === "timeout") throw new Error(`Placement never showed ${rp} reserved`);
      reserved.push(performance.now() - t0);
      // Freed again before another taint may pick this card, so that no write is taken for the wrong one.
      const freed = new Promise<void>((resolve) => watching.set(rp, { t0, reserved: resolve }));
      await app.untaintDevice(ctx(), host(h), deviceUuid, { key: "cyborg.openstack.org/health", reason: "bench: reset" });
      await Promise.race([freed, new Promise((r) => setTimeout(r, 30_000))]);
      watching.delete(rp);
    }
    await Promise.all(inFlight);
    await sync.caughtUp(60_000);

    const inv = await admin.getInventories({ uuid: provider(0, 0), name: "sample" });
    if (inv.inventories.FPGA?.reserved !== 0) throw new Error(`a provider stays reserved after its untaint: ${JSON.stringify(inv.inventories)}`);
    const c = [...commits].sort((a, b) => a - b);
    const r = [...reserved].sort((a, b) => a - b);
    console.log(`taint      ${c.length} taints at ${RATE}/s: committed p50 ${percentile(c, 50).toFixed(1)} ms, p99 ${percentile(c, 99).toFixed(1)} ms, max ${(c.at(-1) ?? 0).toFixed(1)} ms`);
    console.log(`reserved   Placement reserved the device: p50 ${percentile(r, 50).toFixed(0)} ms, p99 ${percentile(r, 99).toFixed(0)} ms, max ${Math.round(r.at(-1) ?? 0)} ms`);
    const ev = (await evictionLatencies(store, app, HOLDERS, EVICTION_ROUNDS)).sort((a, b) => a - b);
    console.log(`eviction   ${EVICTION_ROUNDS} NoExecute taints of a device with ${HOLDERS} holders: every notice p50 ${percentile(ev, 50).toFixed(1)} ms, p99 ${percentile(ev, 99).toFixed(1)} ms`);
    const speedAfter = machineSpeedMs();
    console.log(`machine    fixed CPU task ${speedBefore} ms before, ${speedAfter} ms after`);
    const result = {
      taint_commit_p99_ms: Number(percentile(c, 99).toFixed(1)),
      taint_to_reserved_p99_ms: Math.round(percentile(r, 99)),
      taint_commit_p50_ms: Number(percentile(c, 50).toFixed(1)),
      taint_to_reserved_p50_ms: Math.round(percentile(r, 50)),
      eviction_notice_p99_ms: Number(percentile(ev, 99).toFixed(1)),
      eviction_notice_p50_ms: Number(percentile(ev, 50).toFixed(1)),
      holders: HOLDERS,
      taints: c.length,
      hosts: HOSTS,
      devices_per_host: DEVICES,
      rate_per_s: RATE,
      sqlite_synchronous: FSYNC,
      machine_ms: [speedBefore, speedAfter],
    };
    console.log(`BENCH ${JSON.stringify(result)}`);
  } finally {
    await sync?.stop();
    await store.close();
    await server.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * The Placement sync against Debian's real Placement (uwsgi, 2 processes, sqlite), in-process
 * with an LMDB event log:
 *
 * 1. converge: 100 hosts x 8 FPGA cards are reported at once (100 host reports appended
 *    concurrently, as the service writes them: hostDecider over each host stream); converge_s is
 *    the time from the first report until the sync has handled the whole log, i.e. Placement holds
 *    all 800 providers with their inventory and traits (checked afterwards).
 * 2. placement floor (measured first, on a fresh Placement of its own): the same writes sent
 *    straight to Placement with the same concurrency, without the log or the sync: POST provider,
 *    PUT inventory, PUT traits for 800 providers. floor_s is what Placement itself needs for them
 *    on this machine: converge_s cannot go below it.
 * 3. steady: a trickle of changes (maintenance on/off, FPGA reprogrammed: a function trait swapped),
 *    one every 1/rate s on a random card; the delay of each is measured from the moment its event
 *    is in the log to Placement's answer to the write that shows it (the write's commit).
 *
 *   npm run bench:placement
 *   npm run bench:placement -- --hosts 100 --devices 8 --changes 300 --rate 10 --concurrency 4 [--no-fsync]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rpUuidFor } from "../src/domain/inventory/ids.js";
import type { DriverDevice } from "../src/domain/inventory/report.js";
import { LmdbEventStore } from "../src/infra/eventstore/lmdb.js";
import { createLogger } from "../src/infra/logger.js";
import { PlacementClient } from "../src/reactors/placement/client.js";
import { startPlacementSync } from "../src/reactors/placement/sync.js";
import { MemoryReadStore } from "../src/infra/readstore/memory.js";
import { parseArgs } from "./lib/client.js";
import { fpgaCard, HostWriter } from "./lib/host-writer.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { startPlacementServer } from "./lib/placement-server.js";

const args = parseArgs(process.argv.slice(2));
const HOSTS = Number(args.hosts ?? 100);
const DEVICES = Number(args.devices ?? 8);
const CHANGES = Number(args.changes ?? 300);
const RATE = Number(args.rate ?? 10);
const CONCURRENCY = Number(args.concurrency ?? 4);
const FSYNC = args["no-fsync"] === undefined;
const BUSES = ["3b", "3c", "5e", "5f", "86", "87", "af", "b0", "d8", "d9", "da", "db", "dc", "dd", "de", "df"].slice(0, DEVICES);

const host = (h: number) => `bench-host-${h}`;
const provider = (h: number, d: number) => rpUuidFor(`${host(h)}_0000:${BUSES[d]}:00.0`);
/** Function trait versions per card, changed by "reprogramming". */
const fn = new Map<string, number>();
const cards = (h: number): DriverDevice[] =>
  BUSES.map((bus, d) => fpgaCard(host(h), bus, { traits: ["CUSTOM_FPGA_INTEL_PAC_ARRIA10", `CUSTOM_FPGA_INTEL_FUNCTION_V${fn.get(`${h}/${d}`) ?? 0}`] }));

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

/** Phase 2, run first on a Placement of its own: the minimal writes for as many providers, straight to Placement. */
async function placementFloor(): Promise<number> {
  const server = await startPlacementServer({ processes: 2, synchronous: FSYNC });
  try {
    const admin = new PlacementClient({ url: server.url, token: server.token, concurrency: CONCURRENCY, retries: 10 });
    const roots = await Promise.all(Array.from({ length: HOSTS }, (_, h) => admin.createProvider({ uuid: crypto.randomUUID(), name: `floor-${h}`, parentUuid: null })));
    await admin.ensureTrait("CUSTOM_FPGA_INTEL_PAC_ARRIA10");
    await admin.ensureTrait("CUSTOM_FPGA_INTEL_FUNCTION_V0");
    const f0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (;;) {
          const i = next++;
          if (i >= HOSTS * DEVICES) return;
          const ref = { uuid: crypto.randomUUID(), name: `floor-provider-${i}` };
          const rp = await admin.createProvider({ ...ref, parentUuid: roots[i % HOSTS]!.uuid });
          const g = await admin.putInventories(ref, rp.generation, { FPGA: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 } });
          await admin.putTraits(ref, g, ["CUSTOM_FPGA_INTEL_PAC_ARRIA10", "CUSTOM_FPGA_INTEL_FUNCTION_V0", "OWNER_CYBORG"]);
        }
      }),
    );
    return (performance.now() - f0) / 1000;
  } finally {
    await server.destroy();
  }
}

async function main(): Promise<void> {
  const speedBefore = machineSpeedMs();
  process.stderr.write(`placement floor: ${HOSTS * DEVICES} providers written straight to a fresh Placement...\n`);
  const floorS = await placementFloor();
  console.log(`floor      ${HOSTS * DEVICES} providers written straight to Placement in ${floorS.toFixed(1)} s (${((HOSTS * DEVICES * 3) / floorS).toFixed(0)} writes/s), without the log or the sync`);
  const server = await startPlacementServer({ processes: 2, synchronous: FSYNC });
  const dir = mkdtempSync(join(tmpdir(), "bench-placement-"));
  const store = await LmdbEventStore.open(join(dir, "events"));
  let sync: Awaited<ReturnType<typeof startPlacementSync>> | undefined;
  try {
    const log = createLogger(process.env.LOG_LEVEL ?? "warn");
    const admin = new PlacementClient({ url: server.url, token: server.token, concurrency: CONCURRENCY, retries: 10 });
    process.stderr.write(`Placement (${server.server}, 2 processes, sqlite synchronous=${FSYNC}) at ${server.url}; ${HOSTS} hosts x ${DEVICES} cards\n`);

    // What Nova's compute services did before: one root provider per host.
    await Promise.all(Array.from({ length: HOSTS }, (_, h) => admin.createProvider({ uuid: crypto.randomUUID(), name: host(h), parentUuid: null })));

    // The sync's client, timing the writes that show each steady-state change.
    const pending = new Map<string, number>();
    const delays: number[] = [];
    let requests = 0;
    const client = new PlacementClient({
      url: server.url,
      token: server.token,
      concurrency: CONCURRENCY,
      onResponse: ({ method, path, status }) => {
        requests++;
        const m = /^\/resource_providers\/([0-9a-f-]{36})\/(inventories|traits)$/.exec(path);
        if (method !== "PUT" || status !== 200 || !m) return;
        const t0 = pending.get(m[1]!);
        if (t0 === undefined) return;
        delays.push(performance.now() - t0);
        pending.delete(m[1]!);
      },
    });
    sync = await startPlacementSync({
      store,
      readStore: new MemoryReadStore(),
      config: { PLACEMENT_URL: server.url, PLACEMENT_TOKEN: server.token, PLACEMENT_MISSING_COMPUTE_NODE: "wait", PLACEMENT_RETRY_S: 30, PLACEMENT_CONCURRENCY: CONCURRENCY },
      log,
      tuning: { client },
    });
    const hosts = new HostWriter(store);

    // 1. converge
    const t0 = performance.now();
    await Promise.all(Array.from({ length: HOSTS }, (_, h) => hosts.report(host(h), cards(h))));
    const appendedS = (performance.now() - t0) / 1000;
    await sync.caughtUp(600_000);
    const convergeS = (performance.now() - t0) / 1000;
    const convergeRequests = requests;
    const owned = await admin.listProviders({ required: "OWNER_CYBORG" });
    const sample = await admin.getTraits({ uuid: provider(HOSTS - 1, DEVICES - 1), name: "sample" });
    const providers = owned.length;
    if (providers !== HOSTS * DEVICES || !sample.traits.includes("CUSTOM_FPGA_INTEL_FUNCTION_V0")) {
      throw new Error(`Placement does not match after convergence: ${providers} providers, sample traits ${sample.traits.join(",")}`);
    }
    if (sync.status().waitingHosts) throw new Error(`hosts waiting: ${JSON.stringify(sync.status().waiting)}`);
    console.log(`converge   ${providers} providers in ${convergeS.toFixed(1)} s (reports appended in ${appendedS.toFixed(2)} s); ${convergeRequests} requests, ${(convergeRequests / convergeS).toFixed(0)}/s, ${(convergeRequests / providers).toFixed(2)} per provider`);

    // 3. steady trickle
    const maintaining = new Set<string>();
    let changes = 0;
    const s0 = performance.now();
    const inFlight: Array<Promise<void>> = [];
    for (let i = 0; i < CHANGES; i++) {
      const due = s0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      let h: number;
      let d: number;
      do {
        h = Math.floor(Math.random() * HOSTS);
        d = Math.floor(Math.random() * DEVICES);
      } while (pending.has(provider(h, d)));
      const key = `${h}/${d}`;
      inFlight.push(
        (async () => {
          if (i % 2 === 0) {
            const device = await hosts.deviceAt(host(h), BUSES[d]!);
            const on = !maintaining.has(key);
            if (on) maintaining.add(key);
            else maintaining.delete(key);
            await hosts.setStatus(host(h), device, on ? "MAINTAINING" : "ENABLED");
          } else {
            fn.set(key, (fn.get(key) ?? 0) + 1);
            await hosts.report(host(h), cards(h));
          }
          pending.set(provider(h, d), performance.now());
          changes++;
        })(),
      );
    }
    await Promise.all(inFlight);
    await sync.caughtUp(60_000);
    const deadline = Date.now() + 10_000;
    while (pending.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const sorted = [...delays].sort((a, b) => a - b);
    const steadyP99 = Math.round(percentile(sorted, 99));
    console.log(
      `steady     ${changes} changes at ${RATE}/s: delay p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${steadyP99} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms; ${pending.size} not seen`,
    );

    const speedAfter = machineSpeedMs();
    console.log(`machine    fixed CPU task ${speedBefore} ms before, ${speedAfter} ms after`);
    const r = {
      providers,
      converge_s: Number(convergeS.toFixed(2)),
      steady_p99_ms: steadyP99,
      steady_p50_ms: Math.round(percentile(sorted, 50)),
      steady_changes: changes,
      steady_unseen: pending.size,
      placement_floor_s: Number(floorS.toFixed(2)),
      converge_requests: convergeRequests,
      hosts: HOSTS,
      devices_per_host: DEVICES,
      concurrency: CONCURRENCY,
      sqlite_synchronous: FSYNC,
      machine_ms: [speedBefore, speedAfter],
    };
    console.log(`BENCH ${JSON.stringify(r)}`);
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

/**
 * Partitions made at bind: the figures of docs/partitions.md, in-process with an LMDB event log,
 * the binder, Debian's real Placement (uwsgi, sqlite) followed by the Placement sync, and an agent
 * stand-in that answers every partition request at once with the fake-mig driver's partitioner
 * (0 ms to make one; the agent's WebSocket round trip is left out).
 *
 * - partition_bind_overhead_p99_ms: with CONCURRENCY binds in flight, p99 of a bind that makes a
 *   partition (bind to BOUND) minus p99 of a plain bind (a whole-card provider, no partition), each
 *   followed by an unbind (which destroys the partition).
 * - steps, violations, placement_mismatches: STEPS random binds and unbinds of mixed sizes across
 *   DEVICES H100-like devices; after every step each device's partitions (made, being made, being
 *   destroyed) are checked against its counters, slots and maxInstances (violations); at every
 *   quiet point (every QUIET steps, the sync caught up) Placement's inventory of every profile's
 *   provider is compared with what the model says fits (placement_mismatches).
 * - fragmentation_refused_pct, first_fit_refused_pct: the share of requests refused while the
 *   counters would allow them after a regroup, on the pure model, with the service's placement
 *   (best fit) and with first fit by start (bench/lib/fragmentation.ts).
 *
 *   npm run bench:partitions
 *   npm run bench:partitions -- --rounds 100 --concurrency 8 --devices 100 --steps 10000 --quiet 1000
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Application } from "../src/app/application.js";
import { fakeMigPartitioner, H100_PROFILES } from "../src/clients/agent/drivers/fake-mig.js";
import type { DriverEnv } from "../src/clients/agent/drivers/driver.js";
import { rpUuidFor } from "../src/domain/inventory/ids.js";
import { spanBits } from "../src/domain/inventory/partition-fit.js";
import { availabilityOf } from "../src/domain/inventory/partition-inventory.js";
import { partitioningOf } from "../src/domain/inventory/partition-record.js";
import type { DriverDevice } from "../src/domain/inventory/report.js";
import { desiredProviders } from "../src/domain/inventory/resource-providers.js";
import type { HostState } from "../src/domain/inventory/state.js";
import type { CommandContext } from "../src/domain/shared/types.js";
import { LmdbEventStore } from "../src/infra/eventstore/lmdb.js";
import type { EventStore, RecordedEvent } from "../src/infra/eventstore/port.js";
import { MemoryReadStore } from "../src/infra/readstore/memory.js";
import { Binder } from "../src/reactors/binder/binder.js";
import { ResumingSubscription } from "../src/reactors/follower/resuming-subscription.js";
import { PlacementClient } from "../src/reactors/placement/client.js";
import { HostStates } from "../src/reactors/placement/host-states.js";
import { startPlacementSync } from "../src/reactors/placement/sync.js";
import { parseArgs, percentile } from "./lib/client.js";
import { churn } from "./lib/fragmentation.js";
import { seededRandom } from "./lib/seeded-random.js";
import { fpgaCard } from "./lib/host-writer.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { startPlacementServer } from "./lib/placement-server.js";

const args = parseArgs(process.argv.slice(2));
const ROUNDS = Number(args.rounds ?? 100);
const CONCURRENCY = Number(args.concurrency ?? 8);
const DEVICES = Number(args.devices ?? 100);
const STEPS = Number(args.steps ?? 10_000);
const QUIET = Number(args.quiet ?? 1000);
const GPUS_PER_HOST = 10;
const log = pino({ level: process.env.LOG_LEVEL ?? "warn" });
const ctx = (): CommandContext => ({ principal: "admin", correlationId: crypto.randomUUID(), causationId: crypto.randomUUID(), at: new Date().toISOString(), isAdmin: true, projectId: "bench" });
const bdf = (g: number) => `0000:${(0x40 + g).toString(16).padStart(2, "0")}:00.0`;

function gpu(g: number): DriverDevice {
  const bus = (0x40 + g).toString(16).padStart(2, "0");
  return {
    type: "GPU",
    vendor: "10de",
    model: "bench H100 80GB (MIG)",
    controlPath: { type: "PCI", info: { domain: "0000", bus, device: "00", function: "0" } },
    partitioning: { driverName: "fake_mig", counters: [{ name: "compute", total: 7 }], slots: 8, oneProfileAtATime: false, profiles: [...H100_PROFILES], partitions: [] },
    deployables: [],
  };
}

/** Answers every partition request at once, as the agent would with the fake-mig driver, and tells who waits on a bind's end. */
class AgentStandIn {
  private sub?: ResumingSubscription;
  private loop?: Promise<void>;
  readonly waiters = new Map<string, (outcome: string) => void>();

  constructor(
    private readonly store: EventStore,
    private readonly app: Application,
  ) {}

  async start(): Promise<void> {
    const after = await this.store.headPosition();
    const filter = { eventTypes: ["PartitionCreationRequested", "PartitionDestructionRequested", "ArqBound", "ArqBindFailed"] };
    this.sub = new ResumingSubscription({ name: "bench-agent", events: this.store, after, filter, log });
    this.loop = (async () => {
      for await (const e of this.sub!) void this.on(e).catch((err) => log.error({ err }, "bench agent"));
    })();
  }

  async stop(): Promise<void> {
    await this.sub?.close();
    await this.loop;
  }

  bound(arqUuid: string): Promise<string> {
    return new Promise((resolve) => this.waiters.set(arqUuid, resolve));
  }

  private async on(e: RecordedEvent): Promise<void> {
    const d = e.data as Record<string, any>;
    if (e.type === "ArqBound" || e.type === "ArqBindFailed") {
      const w = this.waiters.get(d.arqUuid);
      this.waiters.delete(d.arqUuid);
      w?.(e.type === "ArqBound" ? "bound" : `failed: ${d.reason}`);
      return;
    }
    const env = { hostname: d.hostname, config: {} } as unknown as DriverEnv;
    if (e.type === "PartitionCreationRequested") {
      const { command, partition } = await fakeMigPartitioner.create(env, { controlPath: d.controlPath, profile: { name: d.profile, toolId: d.toolId }, placement: d.placement });
      await this.app.reportPartitionResult(ctx(), { hostname: d.hostname, requestId: d.requestId, ok: true, partition, command, durationMs: 0 });
    } else {
      const { command } = await fakeMigPartitioner.destroy(env, { controlPath: d.controlPath, uuid: d.uuid, toolRef: d.toolRef });
      await this.app.reportPartitionResult(ctx(), { hostname: d.hostname, requestId: d.requestId, ok: true, command, durationMs: 0 });
    }
  }
}

/** Counter, slot and maxInstances breaches of a host's partitioned devices, as the log leaves them. */
function violations(state: HostState): number {
  let n = 0;
  for (const device of state.devices.values()) {
    const model = partitioningOf(device);
    if (!model) continue;
    const use = new Map<string, number>();
    const count = new Map<string, number>();
    let bits = 0;
    for (const p of model.partitions) {
      const profile = model.profiles.get(p.profile)!;
      for (const c of profile.consumes) use.set(c.counter, (use.get(c.counter) ?? 0) + c.amount);
      count.set(p.profile, (count.get(p.profile) ?? 0) + 1);
      if (p.placement) {
        if (bits & spanBits(p.placement)) n++;
        bits |= spanBits(p.placement);
      }
    }
    for (const [name, total] of model.counters) if ((use.get(name) ?? 0) > total) n++;
    for (const [name, k] of count) if (k > (model.profiles.get(name)!.maxInstances ?? Infinity)) n++;
  }
  return n;
}

async function main(): Promise<void> {
  const speedBefore = machineSpeedMs();
  const server = await startPlacementServer({ processes: 2, synchronous: false });
  const dir = mkdtempSync(join(tmpdir(), "bench-partitions-"));
  const store = await LmdbEventStore.open(join(dir, "events"));
  const hosts = Math.ceil(DEVICES / GPUS_PER_HOST);
  const hostName = (h: number) => `bench-mig-${h}`;
  const app = new Application({ store, newId: () => crypto.randomUUID() });
  const binder = new Binder({ store, app, log, bindTimeoutMs: 60_000, concurrency: 32 });
  const agent = new AgentStandIn(store, app);
  let sync: Awaited<ReturnType<typeof startPlacementSync>> | undefined;
  try {
    const admin = new PlacementClient({ url: server.url, token: server.token, concurrency: 8, retries: 10 });
    await Promise.all(Array.from({ length: hosts }, (_, h) => admin.createProvider({ uuid: crypto.randomUUID(), name: hostName(h), parentUuid: null })));
    sync = await startPlacementSync({
      store,
      readStore: new MemoryReadStore(),
      config: { PLACEMENT_URL: server.url, PLACEMENT_TOKEN: server.token, PLACEMENT_MISSING_COMPUTE_NODE: "wait", PLACEMENT_RETRY_S: 30, PLACEMENT_CONCURRENCY: 8 },
      log,
    });
    await binder.start();
    await agent.start();
    for (let h = 0; h < hosts; h++) {
      const gpus = Array.from({ length: Math.min(GPUS_PER_HOST, DEVICES - h * GPUS_PER_HOST) }, (_, g) => gpu(g));
      await app.reportHostInventory(ctx(), hostName(h), [...gpus, fpgaCard(hostName(h), "af", { accelerators: 16 })]);
    }
    for (const p of H100_PROFILES) await app.createDeviceProfile(ctx(), { name: `mig-${p.name.replace(".", "-")}`, groups: [{ [`resources:${p.resourceClass}`]: "1" }] });
    await app.createDeviceProfile(ctx(), { name: "plain", groups: [{ "resources:FPGA": "1" }] });
    await sync.caughtUp(600_000);
    process.stderr.write(`Placement at ${server.url}: ${hosts} hosts, ${DEVICES} H100-like GPUs, ${DEVICES * H100_PROFILES.length} profile providers\n`);

    async function bindOnce(profile: string, host: string, rpUuid: string): Promise<{ ms: number; outcome: string; arq: string }> {
      const [arq] = await app.createArqs(ctx(), { deviceProfileName: profile });
      const done = agent.bound(arq!.uuid);
      const t0 = performance.now();
      await app.startBinds(ctx(), [{ arqUuid: arq!.uuid, hostname: host, deviceRpUuid: rpUuid, instanceUuid: crypto.randomUUID() }], { allocate: true });
      const outcome = await done;
      return { ms: performance.now() - t0, outcome, arq: arq!.uuid };
    }

    // Phase 1: the overhead of making a partition at bind, CONCURRENCY binds in flight, each on its own GPU.
    async function latencies(kind: "partition" | "plain"): Promise<number[]> {
      const out: number[] = [];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, w) => {
          const host = hostName(w % hosts);
          const g = Math.floor(w / hosts) % GPUS_PER_HOST;
          const rp = kind === "partition" ? rpUuidFor(`${host}_${bdf(g)}_3g.40gb`) : rpUuidFor(`${host}_0000:af:00.0`);
          for (let r = 0; r < ROUNDS; r++) {
            const b = await bindOnce(kind === "partition" ? "mig-3g-40gb" : "plain", host, rp);
            if (b.outcome !== "bound") throw new Error(`a ${kind} bind ${b.outcome}`);
            if (r > 0) out.push(b.ms);
            await app.unbindArqs(ctx(), [b.arq]);
          }
        }),
      );
      return out.sort((a, b) => a - b);
    }
    const plain = await latencies("plain");
    const made = await latencies("partition");
    const overhead = percentile(made, 99) - percentile(plain, 99);
    console.log(`overhead   ${CONCURRENCY} in flight: plain bind p50 ${percentile(plain, 50).toFixed(1)} p99 ${percentile(plain, 99).toFixed(1)} ms; with a partition made p50 ${percentile(made, 50).toFixed(1)} p99 ${percentile(made, 99).toFixed(1)} ms; overhead p99 ${overhead.toFixed(1)} ms`);

    // Phase 2: random churn of mixed sizes, checked after every step and against Placement at quiet points.
    const rnd = seededRandom(7);
    const states = new HostStates(store);
    const held: Array<{ arq: string; host: string }> = [];
    let bad = 0;
    let mismatches = 0;
    let granted = 0;
    let refused = 0;
    for (let i = 1; i <= STEPS; i++) {
      if (held.length > 0 && rnd() < 0.45) {
        const h = held.splice(Math.floor(rnd() * held.length), 1)[0]!;
        await app.unbindArqs(ctx(), [h.arq]);
      } else {
        const device = Math.floor(rnd() * DEVICES);
        const host = hostName(Math.floor(device / GPUS_PER_HOST));
        const profile = H100_PROFILES[Math.min(H100_PROFILES.length - 1, Math.floor(rnd() ** 1.6 * H100_PROFILES.length))]!;
        const b = await bindOnce(`mig-${profile.name.replace(".", "-")}`, host, rpUuidFor(`${host}_${bdf(device % GPUS_PER_HOST)}_${profile.name}`));
        if (b.outcome === "bound") {
          held.push({ arq: b.arq, host });
          granted++;
        } else refused++;
      }
      if (i % 50 === 0 || i === STEPS) for (let h = 0; h < hosts; h++) bad += violations((await states.load(hostName(h))).state);
      if (i % QUIET === 0) {
        await new Promise((r) => setTimeout(r, 200));
        await sync.caughtUp(120_000);
        mismatches += await placementMismatches(admin, states, hosts, hostName);
        process.stderr.write(`step ${i}: ${held.length} partitions held, ${bad} violations, ${mismatches} Placement mismatches so far\n`);
      }
    }
    console.log(`churn      ${STEPS} steps on ${DEVICES} devices: ${granted} binds granted, ${refused} refused; ${bad} violations; ${mismatches} Placement inventories that differ from the model`);

    // Phase 3: fragmentation on the pure model, best fit (the service's) and first fit.
    const report = { counters: [{ name: "compute", total: 7 }], slots: 8, oneProfileAtATime: false, profiles: [...H100_PROFILES], partitions: [] };
    const best = churn(report, DEVICES, STEPS, "best-fit", 11);
    const first = churn(report, DEVICES, STEPS, "first-fit", 11);
    for (const f of [best, first]) console.log(`fragment   ${f.policy}: ${f.requests} requests, ${f.granted} granted, ${f.refused} refused, ${f.refusedForFragmentation} of them only for fragmentation (${f.refusedPct.toFixed(2)} %)`);

    const speedAfter = machineSpeedMs();
    console.log(`machine    fixed CPU task ${speedBefore} ms before, ${speedAfter} ms after`);
    const result = {
      partition_bind_overhead_p99_ms: Number(overhead.toFixed(1)),
      partition_bind_p99_ms: Number(percentile(made, 99).toFixed(1)),
      plain_bind_p99_ms: Number(percentile(plain, 99).toFixed(1)),
      concurrency: CONCURRENCY,
      steps: STEPS,
      violations: bad,
      placement_mismatches: mismatches,
      fragmentation_refused_pct: Number(best.refusedPct.toFixed(2)),
      first_fit_refused_pct: Number(first.refusedPct.toFixed(2)),
      devices: DEVICES,
      machine_ms: [speedBefore, speedAfter],
    };
    console.log(`BENCH ${JSON.stringify(result)}`);
  } finally {
    await agent.stop();
    await binder.stop();
    await sync?.stop();
    await store.close();
    await server.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Profile providers whose Placement capacity (total - reserved) differs from what the model says each device can hold now. */
async function placementMismatches(admin: PlacementClient, states: HostStates, hosts: number, hostName: (h: number) => string): Promise<number> {
  let n = 0;
  for (let h = 0; h < hosts; h++) {
    const state = (await states.load(hostName(h))).state;
    const fits = new Map([...state.devices.values()].flatMap((d) => availabilityOf(d).map((a) => [a.deployableUuid, a.available] as const)));
    const wanted = desiredProviders(state).filter((p) => fits.has(p.deployableUuid));
    for (const p of wanted) {
      const { inventories } = await admin.getInventories({ uuid: p.uuid, name: p.name });
      const inv = inventories[p.resourceClass];
      const model = fits.get(p.deployableUuid)!;
      if (!inv || inv.total - inv.reserved !== model) {
        n++;
        process.stderr.write(`mismatch ${p.name}: Placement ${inv ? inv.total - inv.reserved : "none"}, model ${model}\n`);
      }
    }
  }
  return n;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

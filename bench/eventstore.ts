/**
 * Event store benchmark: durable append rate with 1 and 100 concurrent writers, and the catch-up
 * read rate of the global log through subscribeToAll.
 *
 *   npm run bench:eventstore
 *   node dist/bench/eventstore.js --events 1000000 --appends 100000
 *
 * Progress goes to stderr; the last stdout line is `BENCH {json}`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbEventStore } from "../src/infra/eventstore/lmdb.js";
import { MemoryEventStore } from "../src/infra/eventstore/memory.js";
import { appendRate, catchUpRate, fill, progress, readAllRate } from "./lib/eventstore-workload.js";

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const CATCHUP_EVENTS = option("events", 1_000_000);
const APPENDS_100W = option("appends", 50_000);
const APPENDS_1W = option("appends-1w", 2_000);
/** Append rates are the median of this many runs, each on a fresh store: the machine may be shared. */
const ROUNDS = option("rounds", 3);
const round = (n: number) => Math.round(n);

async function median(label: string, run: () => Promise<number>): Promise<number> {
  const rates: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rates.push(await run());
  rates.sort((a, b) => a - b);
  const m = rates[Math.floor(rates.length / 2)]!;
  progress(`  ${label}: median ${round(m)} (runs: ${rates.map(round).join(", ")})`);
  return m;
}

async function withLmdb<T>(fn: (store: LmdbEventStore) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-bench-eventstore-"));
  const store = await LmdbEventStore.open(dir);
  try {
    return await fn(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  progress(`node ${process.version}, ${cpus().length} cpus, data under ${tmpdir()}`);

  progress(`lmdb: ${APPENDS_1W} durable single-event appends, 1 writer`);
  const lmdb1 = await median("appends/s", () => withLmdb((s) => appendRate(s, 1, APPENDS_1W, "1w")));

  progress(`lmdb: ${APPENDS_100W} durable single-event appends, 100 concurrent writers (time-ordered v7 event ids, as the application writes)`);
  const lmdb100 = await median("appends/s", () =>
    withLmdb(async (s) => {
      await appendRate(s, 100, 5_000, "warmup", "v7");
      return appendRate(s, 100, APPENDS_100W, "100w", "v7");
    }),
  );

  progress(`lmdb: the same with random (v4) event ids`);
  const lmdb100v4 = await median("appends/s", () =>
    withLmdb(async (s) => {
      await appendRate(s, 100, 5_000, "warmup", "v4");
      return appendRate(s, 100, APPENDS_100W, "100w", "v4");
    }),
  );

  progress(`memory: ${APPENDS_100W} single-event appends, 100 concurrent writers`);
  const memory100 = await median("appends/s", () => appendRate(new MemoryEventStore(), 100, APPENDS_100W, "100w"));

  progress(`lmdb: catch-up over ${CATCHUP_EVENTS.toLocaleString("en")} events`);
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-bench-eventstore-"));
  let lmdbCatchUp: number;
  let lmdbReadAll: number;
  try {
    const writer = await LmdbEventStore.open(dir);
    await fill(writer, CATCHUP_EVENTS);
    await writer.close();
    // A fresh open, as a projection rebuild at start would do (the OS page cache stays warm).
    const reader = await LmdbEventStore.open(dir);
    lmdbCatchUp = await catchUpRate(reader, CATCHUP_EVENTS);
    progress(`  subscribeToAll: ${round(lmdbCatchUp)} events/s`);
    lmdbReadAll = await readAllRate(reader, 1000);
    progress(`  readAll in pages of 1000: ${round(lmdbReadAll)} events/s`);
    await reader.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  progress(`memory: catch-up over ${CATCHUP_EVENTS.toLocaleString("en")} events`);
  const memory = new MemoryEventStore();
  await fill(memory, CATCHUP_EVENTS);
  const memoryCatchUp = await catchUpRate(memory, CATCHUP_EVENTS);
  progress(`  subscribeToAll: ${round(memoryCatchUp)} events/s`);

  const result = {
    lmdb_appends_per_s_1w: round(lmdb1),
    lmdb_appends_per_s_100w: round(lmdb100),
    memory_appends_per_s_100w: round(memory100),
    lmdb_appends_per_s_100w_v4ids: round(lmdb100v4),
    lmdb_catchup_events_per_s: round(lmdbCatchUp),
    lmdb_readall_events_per_s: round(lmdbReadAll),
    memory_catchup_events_per_s: round(memoryCatchUp),
    catchup_events: CATCHUP_EVENTS,
  };
  console.log(`BENCH ${JSON.stringify(result)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

/**
 * bench:restart: how long the embedded service takes to be ready on a long log, the first time
 * (every read model built from the log) and after a restart (the audit index on disk, the other
 * models and the binder's and invariant checker's folds loaded from their snapshots), and the
 * memory it holds then.
 *
 *   npm run bench:restart                              # 10,000,000 events, 1,000 hosts x 8 devices
 *   npm run bench:restart -- --events 200000 --hosts 100   # a quick run
 *   options: --data DIR (where the log is kept and reused; default $TMPDIR/cyborg-es-bench-restart-<events>-<hosts>),
 *            --restarts N (restarts measured, default 2),
 *            --restarts-only (keep what an earlier run built and measure restarts alone: no first start;
 *              the first restart after an upgrade rebuilds the models whose code changed, so run it twice)
 *
 * The log (bench/restart-log.ts) is generated once into DIR/events and reused by later runs with
 * the same shape. Each run starts from the log alone (the audit index and the snapshots of an
 * earlier run are removed), starts `cyborg-es serve` in its own process until /readyz answers
 * 200 (the service's own readiness: every model serving, every follower live), stops it with
 * SIGTERM (it writes its snapshots at stop), and starts it again. Memory is the server's VmRSS and
 * RssAnon (/proc) once ready. Progress goes to stderr; the last line on stdout is `BENCH {json}`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { YOUNG_GENERATION } from "../src/cli/young-generation.js";
import { LmdbEventStore } from "../src/infra/eventstore/lmdb.js";
import { freePort } from "./lib/redis-server.js";
import { runAsEntryPoint } from "./lib/tuned-entry.js";
import { writeLog, type LogShape } from "./restart-log.js";

interface Args extends LogShape {
  data?: string;
  restarts: number;
  restartsOnly?: boolean;
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { events: 10_000_000, hosts: 1000, restarts: 2 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v <= 0) throw new Error(`${a} needs a positive integer`);
      return v;
    };
    if (a === "--events") args.events = num();
    else if (a === "--hosts") args.hosts = num();
    else if (a === "--restarts") args.restarts = num();
    else if (a === "--data") args.data = argv[++i];
    else if (a === "--restarts-only") args.restartsOnly = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const MIB = 1024 * 1024;

/** The log of this shape in `dir`, generated unless an earlier run left it complete. */
async function logIn(dir: string, shape: LogShape): Promise<number> {
  const marker = join(dir, "generated.json");
  if (existsSync(marker)) {
    const done = JSON.parse(readFileSync(marker, "utf8")) as LogShape & { written: number };
    if (done.events === shape.events && done.hosts === shape.hosts) {
      log(`reusing the log in ${dir}: ${done.written} events`);
      return done.written;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`generating ${shape.events} events (${shape.hosts} hosts x 8 devices) into ${dir}`);
  const store = await LmdbEventStore.open(join(dir, "events"));
  const t0 = performance.now();
  let shown = 0;
  const written = await writeLog(store, shape, (n) => {
    if (n - shown < 500_000) return;
    shown = n;
    log(`  ${n} events, ${Math.round(n / ((performance.now() - t0) / 1000))} events/s`);
  });
  await store.close();
  log(`  generated ${written} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  writeFileSync(marker, JSON.stringify({ ...shape, written }) + "\n");
  return written;
}

interface Start {
  ready_s: number;
  rss_mib: number;
  rss_anon_mib: number;
  stop_s: number;
}

/** Starts the server on `dir` until /readyz answers 200, reads its memory, stops it. */
async function startAndStop(dir: string): Promise<Start> {
  const port = await freePort();
  const cli = new URL("../src/cli/index.js", import.meta.url).pathname;
  const t0 = performance.now();
  const child = spawn(process.execPath, [YOUNG_GENERATION, cli, "serve"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dir, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  try {
    await readyz(child, `http://127.0.0.1:${port}/readyz`);
    const ready_s = (performance.now() - t0) / 1000;
    const { rss, anon } = memoryOf(child.pid!);
    const t1 = performance.now();
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    return { ready_s, rss_mib: rss / MIB, rss_anon_mib: anon / MIB, stop_s: (performance.now() - t1) / 1000 };
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}

async function readyz(child: ChildProcess, url: string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`);
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function memoryOf(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon") };
}

function bytesIn(path: string): number {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, f) => n + bytesIn(join(path, f)), 0);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = args.data ?? join(tmpdir(), `cyborg-es-bench-restart-${args.events}-${args.hosts}`);
  const events = await logIn(dir, args);
  let first: Start | undefined;
  if (!args.restartsOnly) {
    // From the log alone: what an earlier run built beside it is removed.
    for (const built of ["read-models", "audit-index"]) rmSync(join(dir, built), { recursive: true, force: true });
    log("first start (every model built from the log)...");
    first = await startAndStop(dir);
    log(`  ready after ${first.ready_s.toFixed(2)} s, RSS ${first.rss_mib.toFixed(0)} MiB (anon ${first.rss_anon_mib.toFixed(0)}), stopped in ${first.stop_s.toFixed(2)} s`);
  }
  const restarts: Start[] = [];
  for (let i = 0; i < args.restarts; i++) {
    log(`restart ${i + 1}...`);
    const r = await startAndStop(dir);
    log(`  ready after ${r.ready_s.toFixed(2)} s, RSS ${r.rss_mib.toFixed(0)} MiB (anon ${r.rss_anon_mib.toFixed(0)}), stopped in ${r.stop_s.toFixed(2)} s`);
    restarts.push(r);
  }
  const best = restarts.reduce((a, b) => (b.ready_s < a.ready_s ? b : a));
  const round = (n: number, d = 2) => Number(n.toFixed(d));
  const figures = {
    events,
    hosts: args.hosts,
    first_start_s: first ? round(first.ready_s) : null,
    ready_s: round(best.ready_s),
    ready_s_all: restarts.map((r) => round(r.ready_s)),
    first_start_rss_mib: first ? round(first.rss_mib, 0) : null,
    first_start_rss_anon_mib: first ? round(first.rss_anon_mib, 0) : null,
    rss_mib: round(best.rss_mib, 0),
    rss_anon_mib: round(best.rss_anon_mib, 0),
    rss_vs_first_start: first ? round(best.rss_mib / first.rss_mib, 3) : null,
    stop_s: round(best.stop_s),
    log_mib: round(bytesIn(join(dir, "events")) / MIB, 0),
    audit_index_mib: round(bytesIn(join(dir, "audit-index")) / MIB, 0),
    snapshots_mib: round(bytesIn(join(dir, "read-models")) / MIB, 1),
  };
  process.stdout.write(`BENCH ${JSON.stringify(figures)}\n`);
}

runAsEntryPoint(import.meta.url, main);

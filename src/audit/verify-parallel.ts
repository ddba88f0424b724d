/**
 * audit verify on all cores for the embedded log: the log is cut at global-chain checkpoints into
 * one range per worker thread, each verified by verifyLog from its checkpoint's stored value (the
 * chain between two checkpoints depends on nothing before them; a stream whose previous event is
 * in an earlier range is looked up in the store). The reports are merged; the checkpoint at a
 * cut is compared by the range that ends there. Where no worker script exists (running from the
 * TypeScript sources, in tests) the ranges run one after another in this thread.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { LmdbEventStore } from "../infra/eventstore/lmdb.js";
import type { ChainCheckpoint } from "../infra/eventstore/chain.js";
import { verifyLog, type VerifyOptions, type VerifyProgress, type VerifyReport } from "./verify.js";

export interface Range {
  after: bigint | undefined;
  anchor: string | undefined;
  until: bigint;
}

export interface ParallelOptions extends Pick<VerifyOptions, "after" | "anchor" | "until" | "onProgress"> {
  /** Threads (default: the machine's parallelism). */
  workers?: number;
}

const WORKER = new URL("./verify-worker.js", import.meta.url);

export async function verifyLmdbParallel(dir: string, options: ParallelOptions = {}): Promise<VerifyReport> {
  const store = await LmdbEventStore.open(dir);
  let ranges: Range[];
  try {
    const until = options.until ?? (await store.headPosition());
    if (until === undefined) return await verifyLog(store, options);
    ranges = split(await allCheckpoints(store, until), options.after, options.anchor, until, options.workers ?? availableParallelism());
  } finally {
    await store.close();
  }
  const progress = ranges.map((r) => ({ position: r.after ?? 0n, events: 0 }));
  const report = (i: number) => (p: VerifyProgress) => {
    progress[i] = { position: BigInt(p.position), events: p.events };
    const done = progress.reduce((n, x, k) => n + Number(x.position - (ranges[k]!.after ?? 0n)), 0);
    options.onProgress?.({ position: String(BigInt(done) + (options.after ?? 0n)), until: String(ranges.at(-1)!.until), events: progress.reduce((n, x) => n + x.events, 0) });
  };
  const threads = existsSync(fileURLToPath(WORKER));
  const reports = threads
    ? await Promise.all(ranges.map((r, i) => inWorker(dir, r, report(i))))
    : await sequentially(dir, ranges, report);
  return merge(reports);
}

async function allCheckpoints(store: LmdbEventStore, until: bigint): Promise<ChainCheckpoint[]> {
  const out: ChainCheckpoint[] = [];
  for (let after: bigint | undefined; ; ) {
    const page = await store.readCheckpoints({ after, maxCount: 10_000 });
    for (const c of page) if (c.position < until) out.push(c);
    if (page.length < 10_000 || page.at(-1)!.position >= until) return out;
    after = page.at(-1)!.position;
  }
}

/** `n` ranges of about equal length, cut at checkpoints after `after`. */
export function split(checkpoints: readonly ChainCheckpoint[], after: bigint | undefined, anchor: string | undefined, until: bigint, n: number): Range[] {
  const start = after ?? 0n;
  // A stored checkpoint, not the head: a version 2 segment starts there.
  const cuts = checkpoints.filter((c) => c.position > start && c.position < until && !c.head);
  const ranges: Range[] = [];
  let from: Range["after"] = after;
  let fromAnchor = anchor;
  for (let k = 1; k < n && cuts.length > 0; k++) {
    const target = start + ((until - start) * BigInt(k)) / BigInt(n);
    const cut = cuts.reduce((best, c) => (abs(c.position - target) < abs(best.position - target) ? c : best));
    if (from !== undefined && cut.position <= from) continue;
    ranges.push({ after: from, anchor: fromAnchor, until: cut.position });
    from = cut.position;
    fromAnchor = cut.hash;
  }
  ranges.push({ after: from, anchor: fromAnchor, until });
  return ranges;
}

const abs = (x: bigint) => (x < 0n ? -x : x);

function inWorker(dir: string, range: Range, onProgress: (p: VerifyProgress) => void): Promise<VerifyReport> {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER, { workerData: { dir, range } });
    w.on("message", (m: { progress?: VerifyProgress; report?: VerifyReport }) => {
      if (m.progress) onProgress(m.progress);
      if (m.report) resolve(m.report);
    });
    w.once("error", reject);
    w.once("exit", (code) => code !== 0 && reject(new Error(`verify worker exited with code ${code}`)));
  });
}

async function sequentially(dir: string, ranges: readonly Range[], report: (i: number) => (p: VerifyProgress) => void): Promise<VerifyReport[]> {
  const out: VerifyReport[] = [];
  for (const [i, r] of ranges.entries()) out.push(await verifyRange(dir, r, report(i)));
  return out;
}

export async function verifyRange(dir: string, r: Range, onProgress?: (p: VerifyProgress) => void): Promise<VerifyReport> {
  const store = await LmdbEventStore.open(dir);
  try {
    return await verifyLog(store, { after: r.after, anchor: r.anchor, until: r.until, onProgress });
  } finally {
    await store.close();
  }
}

/** One report from the ranges' reports, in log order. */
export function merge(reports: readonly VerifyReport[]): VerifyReport {
  const firsts = reports.map((r) => r.unhashed.first).filter((x) => x !== null);
  const lasts = reports.map((r) => r.unhashed.last).filter((x) => x !== null);
  return {
    ok: reports.every((r) => r.ok),
    events: sum(reports, (r) => r.events),
    hashed: sum(reports, (r) => r.hashed),
    unhashed: { count: sum(reports, (r) => r.unhashed.count), first: firsts[0] ?? null, last: lasts.at(-1) ?? null },
    // Each range after the first starts at a checkpoint and compares it with its anchor, which is
    // that checkpoint: the range before it compared it already.
    checkpoints: sum(reports, (r) => r.checkpoints) - Math.max(0, reports.length - 1),
    breaks: sum(reports, (r) => r.breaks),
    firstBreaks: reports.flatMap((r) => r.firstBreaks).slice(0, 10),
    chain: reports.at(-1)?.chain ?? null,
    until: reports.at(-1)?.until ?? null,
  };
}

const sum = (rs: readonly VerifyReport[], f: (r: VerifyReport) => number) => rs.reduce((n, r) => n + f(r), 0);

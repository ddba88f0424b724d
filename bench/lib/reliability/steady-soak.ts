/**
 * The long run: N clients doing Nova's boot flow (waiting for acceleratorRequestBound as Nova
 * does) against one service for a set time, counting flows that did not end BOUND and deleted,
 * and sampling the service's resident memory after a warm-up to see whether it keeps growing.
 */
import { readFileSync } from "node:fs";
import { prepareBootTargets, runBootFlows, type FlowStats, type Ledger } from "./boot-flows.js";
import type { ServiceProcess } from "./service-process.js";

export interface SoakResult {
  clients: number;
  minutes: number;
  flows: number;
  failedFlows: number;
  errors: string[];
  /** RSS growth from the first samples after warm-up to the last ones; null where /proc is not there. */
  rssGrowthPct: number | null;
  rssMiB: number[];
  /**
   * The same for the process's anonymous memory alone (its heap and buffers), without the pages of
   * the memory-mapped LMDB log, which RSS counts too and which grow with the log (page cache the
   * kernel takes back under pressure), so that a leak is told from a growing log.
   */
  anonGrowthPct: number | null;
  anonMiB: number[];
  /** The log's mapped pages in RSS (RssFile) at the first and last sample after warm-up. */
  fileMiB: [number, number] | null;
}

export interface MemorySample {
  rss: number;
  anon: number;
  file: number;
}

/** The process's resident set size, its anonymous part and its file-backed part, in MiB (Linux /proc), or null. */
export function memoryMiB(pid: number): MemorySample | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kB = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
    const m = { rss: kB("VmRSS"), anon: kB("RssAnon"), file: kB("RssFile") };
    return Number.isNaN(m.rss) ? null : m;
  } catch {
    return null;
  }
}

/** Growth from the mean of the first few samples to the mean of the last few, in percent. */
function growthPct(samples: number[]): number | null {
  if (samples.length < 2) return null;
  const k = Math.max(1, Math.min(3, Math.floor(samples.length / 3)));
  const first = mean(samples.slice(0, k));
  return Math.round(((mean(samples.slice(-k)) - first) / first) * 1000) / 10;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function steadySoak(
  service: ServiceProcess,
  opts: { clients: number; minutes: number; hosts: number; handles: number; onProgress?: (line: string) => void },
): Promise<SoakResult> {
  const targets = await prepareBootTargets(service.url, "soak", opts.hosts, opts.handles);
  const ledger: Ledger = new Map();
  const stats: FlowStats = { flows: 0, failed: 0, errors: [] };
  const durationMs = opts.minutes * 60_000;
  // Warm-up: a fifth of the run, at least 10 s and at most 2 minutes, before RSS counts.
  const warmupMs = Math.min(120_000, Math.max(10_000, durationMs / 5));
  const started = Date.now();
  let running = true;
  const flows = runBootFlows({ url: service.url, profile: "soak", targets, ledger, waitBy: "subscription", resolveTimeoutMs: 120_000 }, opts.clients, () => running, stats);

  const samples: MemorySample[] = [];
  while (Date.now() - started < durationMs) {
    await new Promise((r) => setTimeout(r, Math.min(5_000, durationMs - (Date.now() - started))));
    ledger.clear(); // the soak judges flows, not the ledger; keep the client's memory flat
    const elapsed = Date.now() - started;
    const m = service.pid ? memoryMiB(service.pid) : null;
    if (elapsed >= warmupMs && m !== null) samples.push(m);
    const memory = m ? `RSS ${m.rss.toFixed(0)} MiB (anonymous ${m.anon.toFixed(0)}, the log's mapped pages ${m.file.toFixed(0)})` : "RSS ?";
    opts.onProgress?.(`soak ${Math.round(elapsed / 1000)}s/${Math.round(durationMs / 1000)}s: ${stats.flows} flows, ${stats.failed} failed, ${memory}${elapsed < warmupMs ? " (warming up)" : ""}`);
  }
  running = false;
  await flows;
  return {
    clients: opts.clients,
    minutes: opts.minutes,
    flows: stats.flows,
    failedFlows: stats.failed,
    errors: stats.errors,
    rssGrowthPct: growthPct(samples.map((s) => s.rss)),
    rssMiB: samples.map((s) => Math.round(s.rss)),
    anonGrowthPct: growthPct(samples.map((s) => s.anon)),
    anonMiB: samples.map((s) => Math.round(s.anon)),
    fileMiB: samples.length ? [Math.round(samples[0]!.file), Math.round(samples.at(-1)!.file)] : null,
  };
}

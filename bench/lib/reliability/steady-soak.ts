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
}

/** The process's resident set size in MiB (Linux /proc), or null. */
export function rssMiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
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

  const samples: number[] = [];
  while (Date.now() - started < durationMs) {
    await new Promise((r) => setTimeout(r, Math.min(5_000, durationMs - (Date.now() - started))));
    ledger.clear(); // the soak judges flows, not the ledger; keep the client's memory flat
    const elapsed = Date.now() - started;
    const rss = service.pid ? rssMiB(service.pid) : null;
    if (elapsed >= warmupMs && rss !== null) samples.push(rss);
    opts.onProgress?.(`soak ${Math.round(elapsed / 1000)}s/${Math.round(durationMs / 1000)}s: ${stats.flows} flows, ${stats.failed} failed, RSS ${rss?.toFixed(0) ?? "?"} MiB${elapsed < warmupMs ? " (warming up)" : ""}`);
  }
  running = false;
  await flows;
  const k = Math.max(1, Math.min(3, Math.floor(samples.length / 3)));
  const growth = samples.length >= 2 ? ((mean(samples.slice(-k)) - mean(samples.slice(0, k))) / mean(samples.slice(0, k))) * 100 : null;
  return {
    clients: opts.clients,
    minutes: opts.minutes,
    flows: stats.flows,
    failedFlows: stats.failed,
    errors: stats.errors,
    rssGrowthPct: growth === null ? null : Math.round(growth * 10) / 10,
    rssMiB: samples.map((s) => Math.round(s)),
  };
}

import { readFileSync } from "node:fs";

/** A process's resident set in MiB (Linux /proc), or null. */
export function rssMiB(pid: number): number | null {
  return statusMiB(pid, "VmRSS");
}

/**
 * Its anonymous part (the JavaScript heap, buffers, native allocations), or null: VmRSS also counts
 * the pages of the log and the audit index mapped into the process, which grow as the service
 * reads them (a first start reads all of them, a restart a few at a time) and are the kernel's
 * page cache, not memory the service holds.
 */
export function rssAnonMiB(pid: number): number | null {
  return statusMiB(pid, "RssAnon");
}

function statusMiB(pid: number, field: string): number | null {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS (or, with `measure`, another figure in MiB) every `everyMs` while running. */
export class RssSampler {
  readonly samples: Array<{ at: number; mib: number }> = [];
  private readonly timer: NodeJS.Timeout;

  constructor(pid: () => number, everyMs: number, measure: (pid: number) => number | null = rssMiB) {
    this.timer = setInterval(() => {
      const mib = measure(pid());
      if (mib !== null) this.samples.push({ at: Date.now(), mib });
    }, everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Samples from `since` on: first, last, max, and the growth of the last third's mean over the first third's. */
  after(since: number): { first: number; last: number; max: number; growth_pct: number } | null {
    const xs = this.samples.filter((s) => s.at >= since).map((s) => s.mib);
    if (xs.length < 3) return null;
    const third = Math.max(1, Math.floor(xs.length / 3));
    const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
    const head = mean(xs.slice(0, third));
    const tail = mean(xs.slice(-third));
    return { first: xs[0]!, last: xs.at(-1)!, max: Math.max(...xs), growth_pct: +(((tail - head) / head) * 100).toFixed(1) };
  }
}

import { readFileSync } from "node:fs";

/**
 * A process's resident set and its anonymous part in MiB (Linux /proc), or null. The anonymous
 * part is the JavaScript heap, buffers and native allocations: VmRSS also counts the pages of the
 * log and the audit index mapped into the process, which grow as the service reads them (a first
 * start reads all of them, a restart a few at a time) and are the kernel's page cache, not memory
 * the service holds.
 */
export function residentMiB(pid: number): { rss: number; anon: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const mib = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024);
    const rss = mib("VmRSS");
    const anon = mib("RssAnon");
    return Number.isNaN(rss) || Number.isNaN(anon) ? null : { rss, anon };
  } catch {
    return null;
  }
}

/** A process's resident set in MiB, or null. */
export function rssMiB(pid: number): number | null {
  return residentMiB(pid)?.rss ?? null;
}

type Sample = { at: number; mib: number; anon: number };

/** Samples a process's RSS and its anonymous part every `everyMs` while running. */
export class RssSampler {
  readonly samples: Sample[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(pid: () => number, everyMs: number) {
    this.timer = setInterval(() => {
      const m = residentMiB(pid());
      if (m !== null) this.samples.push({ at: Date.now(), mib: m.rss, anon: m.anon });
    }, everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Samples of `figure` from `since` on: first, last, max, and the growth of the last third's mean over the first third's. */
  after(since: number, figure: "mib" | "anon" = "mib"): { first: number; last: number; max: number; growth_pct: number } | null {
    const xs = this.samples.filter((s) => s.at >= since).map((s) => s[figure]);
    if (xs.length < 3) return null;
    const third = Math.max(1, Math.floor(xs.length / 3));
    const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
    const head = mean(xs.slice(0, third));
    const tail = mean(xs.slice(-third));
    return { first: xs[0]!, last: xs.at(-1)!, max: Math.max(...xs), growth_pct: +(((tail - head) / head) * 100).toFixed(1) };
  }
}

/** Reads the server's /metrics every interval, as a Prometheus would, and times each scrape. */
export type ScrapeSample = { at: number; ms: number; ok: boolean; bytes: number };

export class Scraper {
  readonly samples: ScrapeSample[] = [];
  /** The last scrape's text. */
  last = "";
  private readonly timer: NodeJS.Timeout;
  private busy = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
    everyMs: number,
  ) {
    this.timer = setInterval(() => void this.scrape(), everyMs);
  }

  /** One scrape at a time: a Prometheus does not start the next before the last answered or timed out (10 s, its default). */
  private async scrape(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    const at = Date.now();
    const t = performance.now();
    try {
      const res = await fetch(this.url, { headers: { authorization: `Bearer ${this.token}` }, signal: AbortSignal.timeout(10_000) });
      const body = await res.text();
      if (res.ok) this.last = body;
      this.samples.push({ at, ms: performance.now() - t, ok: res.ok, bytes: body.length });
    } catch {
      this.samples.push({ at, ms: performance.now() - t, ok: false, bytes: 0 });
    } finally {
      this.busy = false;
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

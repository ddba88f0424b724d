/**
 * The LMDB read store's commits are not synced (lmdb-unsynced.ts), so the kernel writes their pages
 * back when it chooses: on Linux, pages dirty for 30 s, or all of them once dirty pages reach a
 * tenth of memory. LMDB's copy-on-write puts each commit on the pages its free list hands out,
 * scattered over the file: a busy store dirties pages all over it (the models of 10,000 hosts on
 * disk: some 19,000 pages a second), and the kernel then wrote about 2 GB every 30 s in one burst,
 * which the log's synced commits, on the same disk, queued behind (bench/RESULTS.md, the fleet on
 * disk). Syncing the environment every `everyMs` while it takes writes sends the same pages to the
 * disk a little at a time instead. The sync runs on libuv's thread pool: no caller waits for it.
 */
export class SteadyWriteback {
  private dirty = false;
  private inFlight: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  /** `sync`: the environment's forced sync. A failed one is left to the next (and to the close's, which reports it). */
  constructor(
    private readonly sync: () => Promise<void>,
    everyMs: number,
  ) {
    this.timer = setInterval(() => this.tick(), everyMs);
    this.timer.unref();
  }

  /** Something was committed (or is about to be): the next tick syncs. */
  written(): void {
    this.dirty = true;
  }

  /** Stops syncing; resolves once a sync under way is done. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }

  private tick(): void {
    if (!this.dirty || this.inFlight) return;
    this.dirty = false;
    this.inFlight = this.sync()
      .catch(() => undefined)
      .finally(() => {
        this.inFlight = undefined;
      });
  }
}

/** How often a store that took writes is synced. */
export const WRITEBACK_EVERY_MS = 500;

/**
 * Retention in the background: the projector role runs it every RETENTION_INTERVAL_S (and
 * `cyborg-es audit archive` on demand, retention.ts). After each run, the audit index drops the
 * entries of every segment it still holds (written by this run, or by the command meanwhile):
 * the projector commits those removals with its next batches; history and trace find the events
 * in the segment's own index from then on (archive.ts).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { name as auditModel } from "../../../projections/audit/projection.js";
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import type { Logger } from "../../infra/logger.js";
import type { Write } from "../../infra/readstore/port.js";
import type { Archive } from "./archive.js";
import { retractions, runRetention, type RetentionResult } from "./retention.js";
import { segmentEvents } from "./segment-file.js";

export interface RetentionSchedulerOptions {
  store: EventStore;
  archive: Archive;
  /** Streams that ended this many days ago are archived. */
  days: number;
  intervalMs: number;
  /** Where the audit index's removals go (the projector); absent: the index keeps the entries, which the archive resolves. */
  index?: { retract(projection: string, writes: readonly Write[]): Promise<void> };
  metrics?: { retentionRun(outcome: "archived" | "nothing_due" | "failed", events: number): void };
  log: Logger;
  now?: () => Date;
}

const DAY_MS = 86_400_000;
/** The last segment whose entries the audit index dropped (a file: the index is rebuilt without them anyway). */
const RETRACTED = ".audit-index-retracted";

export class RetentionScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private retracting: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly o: RetentionSchedulerOptions) {}

  start(): void {
    const schedule = (ms: number) => {
      if (this.stopped) return;
      this.timer = setTimeout(tick, ms);
      this.timer.unref();
    };
    const tick = () => {
      this.running = this.runOnce().finally(() => schedule(this.o.intervalMs));
    };
    schedule(Math.min(this.o.intervalMs, 60_000));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One run: archive what is due, then drop the archived entries from the audit index. */
  async runOnce(): Promise<RetentionResult | undefined> {
    const now = this.o.now?.() ?? new Date();
    const cutoff = new Date(now.getTime() - this.o.days * DAY_MS);
    const started = performance.now();
    try {
      const r = await runRetention(this.o.store, { cutoff, dir: this.o.archive.dir, now });
      const seconds = (performance.now() - started) / 1000;
      this.o.metrics?.retentionRun(r.events > 0 ? "archived" : "nothing_due", r.events);
      const bytes = r.written.reduce((n, s) => n + s.bytes, 0);
      this.o.log.info({ cutoff: cutoff.toISOString(), segments: r.segments, streams: r.streams, events: r.events, bytes, seconds: Number(seconds.toFixed(1)) }, "retention archived ended streams");
      // In the background: the projector commits the removals with its next batches, which an idle log may not bring soon.
      this.retracting ??= this.retractArchived()
        .catch((err: unknown) => this.o.log.warn({ err }, "retention: the audit index keeps archived entries for now (history resolves them from the archive)"))
        .finally(() => (this.retracting = undefined));
      return r;
    } catch (err) {
      this.o.metrics?.retentionRun("failed", 0);
      this.o.log.error({ err }, "retention failed; the live log is unchanged past its last recorded segment");
      return undefined;
    }
  }

  /** Drops from the audit index the entries of every segment it may still hold. */
  async retractArchived(): Promise<void> {
    const index = this.o.index;
    if (!index) return;
    const marker = join(this.o.archive.dir, RETRACTED);
    const done = Number((await readFile(marker, "utf8").catch(() => "0")).trim()) || 0;
    for (const s of await this.o.archive.segments()) {
      if (s.seq <= done) continue;
      const events: RecordedEvent[] = [];
      for await (const e of segmentEvents(join(this.o.archive.dir, s.file))) events.push(e);
      await index.retract(auditModel, retractions(events));
      await writeFile(marker, String(s.seq));
    }
  }
}

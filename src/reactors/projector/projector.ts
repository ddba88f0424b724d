/**
 * Keeps every read model up to date from the log, in one loop for all projections: one
 * subscription from the lowest checkpoint (log-reader.ts); each projection skips what it already
 * applied.
 *
 * - Catching up, it batches (up to `batchSize` events, or what has arrived once the head is
 *   reached) and commits each projection's batch with its checkpoint in one atomic store call;
 *   live, it applies events as they come. A projection whose batch has no writes only moves its
 *   checkpoint in memory while live; the health check saves it within `healthCheckMs`.
 * - A store that lost a model (checkpoints.ts) is noticed by the next write or health check, even
 *   when no event comes, and the model is rebuilt (rebuild.ts) without a restart.
 * - Hooks run before each batch is applied and after every projection committed it.
 * - A projection whose `project` throws is stopped (state "stopped", with the error); the others go on.
 * - A lost subscription to the log is opened again by the reader after the last event it read
 *   (ResumingSubscription); other failures (the read store) start the reader again from the lowest
 *   checkpoint after a backoff (backoffDelay, 100 ms to 5 s).
 */
import type { RecordedEvent } from "../../infra/eventstore/port.js";
import { CheckpointMismatchError, type Write } from "../../infra/readstore/port.js";
import { backoffDelay } from "../follower/retries.js";
import { Checkpoints } from "./checkpoints.js";
import { LogReader } from "./log-reader.js";
import { reportWhile } from "../../infra/logger.js";
import { logCatchUp, statusOf, Waiters, type ProjectionStatus } from "./progress.js";
import { withDefaults, type ProjectorOptions, type ResolvedOptions } from "./options.js";
import { replay, type RebuildProgress } from "./rebuild.js";
import { RebuildRequests } from "./rebuild-requests.js";
import { ServingMarks } from "./serving.js";
import { projectBatch, Slots, type Slot } from "./slots.js";

/** Retracting writes committed with one batch at most. */
const RETRACT_BATCH = 20_000;

export class Projector {
  private readonly o: ResolvedOptions;
  private readonly slots: Slots;
  private readonly checkpoints: Checkpoints;
  private readonly reader: LogReader;
  private readonly waiters = new Waiters();
  private readonly requests = new RebuildRequests();
  /** Writes retract() queued, by model, in order. */
  private readonly retractions = new Map<string, Array<{ writes: Write[]; done: () => void }>>();
  private running = false;
  private loopDone?: Promise<void>;
  private needRestart = false;
  private wakeLoop?: () => void;
  private lastHealth = 0;
  private behindSince?: number;
  private inFlight: readonly RecordedEvent[] = [];
  private readonly serving: ServingMarks;
  private stopWatching?: () => void;

  constructor(options: ProjectorOptions) {
    this.o = withDefaults(options);
    this.slots = new Slots(options.projections);
    this.checkpoints = new Checkpoints(this.o.store, this.o.events, this.slots, this.o.log, (s) => {
      this.needRestart = true;
      this.serving.demote(s);
    });
    this.serving = new ServingMarks(this.o.store, this.slots, () => (this.lastHealth = 0));
    this.reader = new LogReader(this.o.events, this.o.batchSize, () => this.wakeLoop?.(), this.o.log);
  }

  /** Loads the checkpoints, starts the loop, and resolves once caught up with the head as of now. */
  async start(): Promise<void> {
    if (this.running) throw new Error("the projector is already running");
    this.reader.seeHead(await this.o.events.headPosition());
    const { checkpoints, foreign } = await this.checkpoints.load(this.reader.head);
    for (const h of this.o.hooks) h.started?.(checkpoints, this.reader.head);
    // Rebuilt up to the head before they are served again: never served half built.
    if (foreign.length) await this.replaySlots(foreign, "the read store holds them built from another log", undefined, this.reader.head);
    // A store reached again may be another one: the next health check is now.
    this.stopWatching = this.o.store.watchReconnects(() => {
      this.lastHealth = 0;
      this.wakeLoop?.();
    });
    this.running = true;
    this.startReader();
    this.loopDone = this.loop();
    this.o.log.info({ checkpoints: [...checkpoints].map(([n, c]) => [n, c?.toString() ?? null]) }, "projector started");
    const head = this.reader.head;
    if (head !== undefined) await reportWhile(this.waitFor(head), 2000, () => logCatchUp(this.o.log, head, this.status()));
    await this.serving.update(head);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopWatching?.();
    this.wakeLoop?.();
    await this.loopDone;
    await this.reader.stop();
    await this.checkpoints.save().catch((err) => this.o.log.warn({ err }, "could not save checkpoints at stop"));
    const stopped = new Error("the projector stopped");
    this.waiters.rejectAll(stopped);
    this.requests.rejectAll(stopped);
  }

  /** Resolves when every running projection has applied the log up to `position`. */
  waitFor(position: bigint, options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.slots.reached(position)) return Promise.resolve();
    if (!this.running) return Promise.reject(new Error("the projector is not running"));
    return this.waiters.wait(position, options.timeoutMs);
  }

  /** Resolves when the read models reflect the log up to its current head (read-your-writes). */
  async caughtUp(options: { timeoutMs?: number } = {}): Promise<void> {
    const head = await this.o.events.headPosition();
    if (head !== undefined) await this.waitFor(head, options);
  }

  /**
   * Drops the named read models (all by default) and replays the log into them: while running, up
   * to what was applied (the loop goes on from there); stopped, up to the head (the CLI, the benchmark).
   */
  async rebuild(names?: readonly string[], onProgress?: (p: RebuildProgress) => void): Promise<void> {
    const slots = this.slots.pick(names);
    if (this.running) {
      const done = this.requests.add(slots, onProgress);
      this.wakeLoop?.();
      return done;
    }
    const upTo = await this.o.events.headPosition();
    this.reader.seeHead(upTo);
    await replay(this.o.events, this.o.store, slots, { upTo, source: this.o.replayLog, batchSize: this.o.rebuildBatchSize, log: this.o.log, now: this.o.now, onProgress, origin: this.checkpoints.origin });
  }

  status(): ProjectionStatus[] {
    return statusOf(this.slots, this.reader, [...this.inFlight, ...this.reader.queue], this.running, this.behindSince, this.o.now());
  }

  // ---- the loop ------------------------------------------------------------------------------

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      try {
        await this.requests.runAll((slots, onProgress) => this.replaySlots(slots, "rebuild requested", onProgress));
        if (this.needRestart) {
          this.needRestart = false;
          await this.reader.stop();
          this.startReader();
        }
        if (this.o.now() - this.lastHealth >= this.o.healthCheckMs) await this.healthCheck();
        const batch = await this.nextBatch();
        if (batch.length > 0) await this.apply(batch);
        else await this.applyRetractions();
        await this.serving.update(this.reader.head);
        failures = 0;
      } catch (err) {
        if (!this.running) break;
        const backoff = backoffDelay(++failures, { minMs: 100, maxMs: 5000 });
        this.o.log.error({ err, retryInMs: backoff }, "projector failed; retrying");
        // Quiet the reader first, so that only stop() or a request cuts the pause short.
        this.needRestart = true;
        await this.reader.stop();
        await this.pause(backoff);
      }
    }
  }

  private startReader(): void {
    if (this.slots.all.some((s) => !s.failed)) this.reader.start(this.slots.lowestProcessed());
  }

  private async nextBatch(): Promise<RecordedEvent[]> {
    const firstWait = this.o.now();
    for (;;) {
      if (!this.running || this.requests.pending || this.needRestart) return [];
      if (this.reader.error !== undefined) throw this.reader.error;
      const queued = this.reader.queue.length;
      if (queued >= this.o.batchSize || (queued > 0 && (!this.reader.catchingUp || this.o.now() - firstWait >= 20))) {
        return this.reader.take(this.o.batchSize);
      }
      // Retractions are committed on their own while no event comes (applyRetractions).
      if (queued === 0 && this.retracting()) return [];
      const untilHealth = this.o.healthCheckMs - (this.o.now() - this.lastHealth);
      if (untilHealth <= 0) return [];
      await this.pause(queued > 0 ? 20 : Math.max(1, untilHealth));
    }
  }

  /** Waits `ms`, or less if the reader, stop() or a request wakes the loop. */
  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeLoop = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeLoop = undefined;
  }

  private async apply(batch: RecordedEvent[]): Promise<void> {
    this.inFlight = batch;
    try {
      const last = batch.at(-1)!.position;
      const live = batch.length === 1 && this.reader.head !== undefined && last >= this.reader.head;
      for (const h of this.o.hooks) await h.beforeApply?.(batch);
      const active = this.slots.all.filter((s) => !s.failed && (s.processed === undefined || s.processed < last));
      const results = await Promise.allSettled(active.map((s) => this.applySlot(s, batch, !live)));
      this.inFlight = [];
      await this.committed();
      const refused = results.filter((r) => r.status === "rejected");
      // A store that lost one model lost them all (a restart, FLUSHALL), or is another log's:
      // look at every one now, before a waiter is told that a model with no write in this batch is up to date.
      if (refused.some((r) => r.reason instanceof CheckpointMismatchError)) {
        const lost = await this.checkpoints.lost();
        if (lost.length) await this.heal(lost, "a write found the projection's checkpoint gone or another log's");
      }
      const failure = refused.find((r) => !(r.reason instanceof CheckpointMismatchError));
      if (failure) throw failure.reason;
    } finally {
      this.inFlight = [];
    }
  }

  /**
   * Writes that take out of a model what events no longer in the log wrote (retention moved them
   * to the archive: a rebuild from the log would not write them either). They go with the model's
   * next batches, or on their own while no event comes, at most RETRACT_BATCH a commit; the
   * promise settles once they are all committed.
   */
  retract(projection: string, writes: readonly Write[]): Promise<void> {
    if (writes.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const queue = this.retractions.get(projection) ?? [];
      queue.push({ writes: [...writes], done: resolve });
      this.retractions.set(projection, queue);
      this.wakeLoop?.();
    });
  }

  /** Whether a model that can take them has retractions queued. */
  private retracting(): boolean {
    return this.slots.all.some((s) => !s.failed && s.processed !== undefined && (this.retractions.get(s.projection.name)?.length ?? 0) > 0);
  }

  /** With no event to apply: each model's next retracting writes, committed at the checkpoint it has (a model that has applied nothing yet waits for its first batch). */
  private async applyRetractions(): Promise<void> {
    for (const s of this.slots.all) {
      if (s.failed || s.processed === undefined) continue;
      const taken = this.nextRetractions(s);
      if (taken.length === 0) continue;
      await this.checkpoints.commit(s, taken, { position: s.processed, id: s.processedEvent! });
      this.retracted(s, taken.length);
    }
  }

  /** The model's next retracting writes, at most RETRACT_BATCH. */
  private nextRetractions(s: Slot): Write[] {
    return this.retractions.get(s.projection.name)?.[0]?.writes.slice(0, RETRACT_BATCH) ?? [];
  }

  /** After a commit: the first `count` queued retracting writes are done; a retract() call whose writes are all in resolves. */
  private retracted(s: Slot, count: number): void {
    const queue = this.retractions.get(s.projection.name);
    const first = queue?.[0];
    if (!first || count === 0) return;
    first.writes.splice(0, count);
    if (first.writes.length === 0) {
      queue.shift();
      first.done();
    }
  }

  /** Commits the batch for one model with its checkpoint (or, live with nothing to write, only moves it in memory). */
  private async applySlot(s: Slot, batch: readonly RecordedEvent[], persist: boolean): Promise<void> {
    const last = batch.at(-1)!;
    const projected = projectBatch(s, batch, this.o.log);
    if (projected === undefined) return;
    const taken = this.nextRetractions(s);
    const writes = taken.length > 0 ? [...projected, ...taken] : projected;
    if (writes.length === 0 && !persist) {
      s.processed = last.position;
      s.processedEvent = last.id;
      return;
    }
    await this.checkpoints.commit(s, writes, last);
    this.retracted(s, taken.length);
  }

  /** After a batch: hooks learn what every model committed; waiters that are done resolve. */
  private async committed(): Promise<void> {
    const low = this.slots.lowestProcessed();
    if (low !== undefined) for (const h of this.o.hooks) await h.afterCommit?.(low);
    this.settle();
  }

  private settle(): void {
    this.waiters.settle((p) => this.slots.reached(p));
    const low = this.slots.lowestProcessed();
    const head = this.reader.head;
    if (head === undefined || (low !== undefined && low >= head)) this.behindSince = undefined;
    else this.behindSince ??= this.o.now();
  }

  /** The one rebuild, while running: up to what any model had applied; the loop goes on from there. */
  private async replaySlots(slots: Slot[], reason: string, onProgress?: (p: RebuildProgress) => void, upTo = this.slots.highestProcessed()): Promise<void> {
    for (const h of this.o.hooks) h.replaying?.(upTo);
    this.o.log.warn({ projections: slots.map((s) => s.projection.name), reason, upTo: upTo?.toString() }, "rebuilding read models");
    this.needRestart = true;
    const t0 = this.o.now();
    await replay(this.o.events, this.o.store, slots, {
      upTo,
      source: this.o.replayLog,
      origin: this.checkpoints.origin,
      batchSize: this.o.rebuildBatchSize,
      log: this.o.log,
      now: this.o.now,
      onProgress: (p) => {
        onProgress?.(p);
        this.settle();
      },
    });
    this.settle();
    this.o.log.info({ projections: slots.map((s) => s.projection.name), ms: this.o.now() - t0 }, "rebuild done");
  }

  private heal(lost: Slot[], reason: string): Promise<void> {
    return this.replaySlots(lost, `the read store lost their data (${reason})`);
  }

  /** Refreshes the head, checks each model's marker, saves checkpoints moved without writes. */
  private async healthCheck(): Promise<void> {
    this.lastHealth = this.o.now();
    this.reader.seeHead(await this.o.events.headPosition());
    const lost = await this.checkpoints.lost();
    if (lost.length) return this.heal(lost, "its checkpoint marker is missing, or names another log");
    const gone = await this.checkpoints.save();
    if (gone.length) await this.heal(gone, "saving a checkpoint found it gone");
    this.settle();
  }
}

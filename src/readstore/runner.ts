import type { EventStore, RecordedEvent, Subscription } from "../eventstore/port.js";
import type { PubSub } from "../pubsub/port.js";
import { getArqs } from "../../projections/arqs.js";
import { BindNotifier } from "./bind-notifications.js";
import { CheckpointMismatchError, type ReadStore, type Write } from "./port.js";
import type { Projection } from "./projection.js";

export type ProjectionState = "catching-up" | "live" | "rebuilding" | "stopped";

export interface ProjectionStatus {
  name: string;
  /** Position up to which the read model reflects the log (decimal string; null: nothing applied). */
  checkpoint: string | null;
  /** Newest log position the runner knows of (decimal string; null: empty log). */
  headPosition: string | null;
  /** Events between checkpoint and head; estimated (`lagEventsExact` false) for the part not read yet. */
  lagEvents?: number;
  lagEventsExact?: boolean;
  /** How stale the model is: 0 when caught up, else the age of the oldest event it has not applied. */
  lagMs: number;
  state: ProjectionState;
  /** Why the projection stopped (its `project` threw). */
  error?: string;
}

export interface RebuildProgress {
  projections: string[];
  /** Last position applied (decimal string). */
  position: string;
  headPosition: string | null;
  /** Events read since the rebuild started. */
  events: number;
  elapsedMs: number;
}

export interface RunnerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RunnerOptions {
  events: EventStore;
  store: ReadStore;
  projections: readonly Projection[];
  /** Where accelerator-request-bound goes; without it, nothing is published. */
  pubsub?: PubSub;
  /** Most events per store write while catching up (default 1000). */
  batchSize?: number;
  /** Events per store write in a rebuild while stopped (default 2000: fewer, fuller scripts). */
  rebuildBatchSize?: number;
  /** How often the runner refreshes the head, checks that the store still holds its data, and
   *  saves checkpoints it moved without writing (default 1000 ms). */
  healthCheckMs?: number;
  log?: RunnerLogger;
  now?: () => number;
}

interface Slot {
  readonly projection: Projection;
  readonly types: ReadonlySet<string>;
  /** The model reflects the log up to here (events without writes for it count as applied). */
  processed: bigint | undefined;
  /** The checkpoint the store holds, as far as this runner wrote or read it. */
  stored: bigint | undefined;
  /** Set while rebuilding: the head to reach (null: the log was empty). */
  rebuildTarget?: bigint | null;
  failed?: string;
}

interface Rebuild {
  slots: Slot[];
  onProgress?: (p: RebuildProgress) => void;
  startedAt: number;
  events: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface Waiter {
  position: bigint;
  resolve: () => void;
  reject: (err: unknown) => void;
  timer?: NodeJS.Timeout;
}

/** Batches a rebuild while stopped keeps in flight. */
const IN_FLIGHT = 3;

const silent: RunnerLogger = { info() {}, warn() {}, error() {} };

/**
 * Keeps every read model up to date from the log, in one loop for all projections: one
 * subscription from the lowest checkpoint; each projection skips what it already applied.
 *
 * - Catching up, it batches (up to `batchSize` events, or what has arrived once the head is
 *   reached) and writes each projection's batch with its checkpoint in one atomic store call;
 *   live, it applies events as they come. A projection whose batch has no writes only moves its
 *   checkpoint in memory while live; the health check saves it within `healthCheckMs`.
 * - Every write names the checkpoint it expects: if the store lost its data (Redis restarted
 *   empty, FLUSHALL: the `{name}:@meta` marker is gone) the write fails, and the health check
 *   notices it even when no event comes; the runner then drops and rebuilds the lost models,
 *   without a restart. A store that went back to an older checkpoint is resumed from it.
 * - accelerator-request-bound is published after every projection committed the event (see
 *   BindNotifier for which events notify on restart, rebuild and heal).
 * - A projection whose `project` throws is stopped (state "stopped", with the error); the others go on.
 */
export class ProjectionRunner {
  private readonly slots: Slot[];
  private readonly events: EventStore;
  private readonly store: ReadStore;
  private readonly batchSize: number;
  private readonly rebuildBatchSize: number;
  private readonly healthCheckMs: number;
  private readonly log: RunnerLogger;
  private readonly now: () => number;
  private readonly notifier?: BindNotifier;

  private running = false;
  private loopDone?: Promise<void>;
  private generation = 0;
  private sub?: Subscription;
  private queue: RecordedEvent[] = [];
  private inFlight: readonly RecordedEvent[] = [];
  private readerError?: unknown;
  private needRestart = false;
  private wakeApplier?: () => void;
  private readerSpace?: () => void;
  private head: bigint | undefined;
  private lastRead: bigint | undefined;
  private firstRead: bigint | undefined;
  private readCount = 0;
  private behindSince?: number;
  private lastHealth = 0;
  private readonly commands: Array<{ slots: Slot[]; rebuild: Rebuild }> = [];
  private readonly rebuilds: Rebuild[] = [];
  private waiters: Waiter[] = [];

  constructor(options: RunnerOptions) {
    const names = new Set<string>();
    this.slots = options.projections.map((projection) => {
      if (names.has(projection.name)) throw new Error(`two projections named ${projection.name}`);
      names.add(projection.name);
      return { projection, types: new Set(projection.eventTypes), processed: undefined, stored: undefined };
    });
    this.events = options.events;
    this.store = options.store;
    this.batchSize = options.batchSize ?? 1000;
    this.rebuildBatchSize = options.rebuildBatchSize ?? 2000;
    this.healthCheckMs = options.healthCheckMs ?? 1000;
    this.log = options.log ?? silent;
    this.now = options.now ?? Date.now;
    if (options.pubsub && names.has("arqs")) {
      this.notifier = new BindNotifier(
        options.pubsub,
        async (uuids) => {
          const arqs = await getArqs(this.store, uuids);
          return new Map(arqs.flatMap((a) => (a ? [[a.uuid, { state: a.state, instanceUuid: a.instanceUuid }] as const] : [])));
        },
        this.log,
      );
    }
  }

  /** Loads the checkpoints, starts the loop, and resolves once caught up with the head as of now. */
  async start(): Promise<void> {
    if (this.running) throw new Error("the projection runner is already running");
    const cps = await this.store.getCheckpoints(this.slots.map((s) => s.projection.name));
    this.slots.forEach((s, i) => {
      s.processed = s.stored = cps[i];
      s.failed = undefined;
    });
    this.head = await this.events.headPosition();
    const arqs = this.slots.find((s) => s.projection.name === "arqs");
    // Events after the arqs checkpoint were never applied, hence never notified: notify them once.
    this.notifier?.raiseFloor(arqs?.stored ?? this.head);
    this.running = true;
    this.startReader();
    this.loopDone = this.loop();
    this.log.info({ checkpoints: this.status().map((s) => [s.name, s.checkpoint]) }, "projection runner started");
    if (this.head !== undefined) await this.waitFor(this.head);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wakeApplier?.();
    await this.loopDone;
    await this.stopReader();
    await this.saveCheckpoints().catch((err) => this.log.warn({ err }, "could not save checkpoints at stop"));
    const stopped = new Error("the projection runner stopped");
    for (const w of this.waiters.splice(0)) this.settle(w, stopped);
    for (const r of this.rebuilds.splice(0)) r.reject(stopped);
    for (const c of this.commands.splice(0)) c.rebuild.reject(stopped);
  }

  /** Resolves when every running projection has applied the log up to `position`. */
  waitFor(position: bigint, options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.reached(position)) return Promise.resolve();
    if (!this.running) return Promise.reject(new Error("the projection runner is not running"));
    return new Promise((resolve, reject) => {
      const w: Waiter = { position, resolve, reject };
      if (options.timeoutMs !== undefined) {
        w.timer = setTimeout(() => {
          this.waiters = this.waiters.filter((x) => x !== w);
          reject(new Error(`read models did not reach position ${position} within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
      }
      this.waiters.push(w);
    });
  }

  /** Resolves when the read models reflect the log up to its current head (read-your-writes). */
  async caughtUp(options: { timeoutMs?: number } = {}): Promise<void> {
    const head = await this.events.headPosition();
    if (head !== undefined) await this.waitFor(head, options);
  }

  /**
   * Drops the named read models (all by default) and replays the log into them. Running, the
   * others go on; stopped, it replays with readAll and returns (the CLI and the benchmark).
   * A rebuild never notifies an old bind.
   */
  async rebuild(names?: readonly string[], onProgress?: (p: RebuildProgress) => void): Promise<void> {
    const slots = this.pick(names);
    if (!this.running) return this.rebuildStopped(slots, onProgress);
    return new Promise((resolve, reject) => {
      this.commands.push({ slots, rebuild: { slots, onProgress, startedAt: this.now(), events: 0, resolve, reject } });
      this.wakeApplier?.();
    });
  }

  status(): ProjectionStatus[] {
    const now = this.now();
    const head = this.head;
    const pending = [...this.inFlight, ...this.queue];
    const unread = this.unreadEstimate();
    return this.slots.map((s) => {
      const caughtUp = head === undefined || (s.processed !== undefined && s.processed >= head);
      let lagEvents = 0;
      let lagMs = 0;
      if (!caughtUp) {
        const first = firstAfter(pending, s.processed);
        lagEvents = pending.length - first + unread.events;
        const oldest = pending[first];
        lagMs = Math.max(0, now - (oldest ? oldest.recordedAt.getTime() : (this.behindSince ?? now)));
      }
      const state: ProjectionState =
        !this.running || s.failed ? "stopped" : s.rebuildTarget !== undefined ? "rebuilding" : caughtUp ? "live" : "catching-up";
      return {
        name: s.projection.name,
        checkpoint: s.processed?.toString() ?? null,
        headPosition: head?.toString() ?? null,
        lagEvents,
        lagEventsExact: caughtUp || unread.exact,
        lagMs,
        state,
        ...(s.failed ? { error: s.failed } : {}),
      };
    });
  }

  /** Notifications published since start (tests, metrics). */
  get notificationsPublished(): number {
    return this.notifier?.published ?? 0;
  }

  // ---- the loop ------------------------------------------------------------------------------

  private async loop(): Promise<void> {
    let backoff = 0;
    while (this.running) {
      try {
        await this.runCommands();
        if (this.needRestart) {
          this.needRestart = false;
          await this.stopReader();
          this.startReader();
        }
        if (this.now() - this.lastHealth >= this.healthCheckMs) await this.healthCheck();
        const batch = await this.nextBatch();
        if (batch.length > 0) await this.applyOnline(batch);
        backoff = 0;
      } catch (err) {
        if (!this.running) break;
        backoff = Math.min(5000, backoff ? backoff * 2 : 100);
        this.log.error({ err, retryInMs: backoff }, "projection runner failed; retrying");
        // Quiet the reader first, so that only stop() or a command cuts the pause short.
        this.needRestart = true;
        await this.stopReader();
        await this.pause(backoff);
      }
    }
  }

  private async nextBatch(): Promise<RecordedEvent[]> {
    const firstWait = this.now();
    for (;;) {
      if (!this.running || this.commands.length > 0 || this.needRestart) return [];
      if (this.readerError !== undefined) {
        const err = this.readerError;
        this.readerError = undefined;
        throw err;
      }
      const untilHealth = this.healthCheckMs - (this.now() - this.lastHealth);
      const catchingUp = this.head !== undefined && (this.lastRead === undefined || this.lastRead < this.head);
      if (this.queue.length >= this.batchSize || (this.queue.length > 0 && (!catchingUp || this.now() - firstWait >= 20))) {
        const batch = this.queue.splice(0, this.batchSize);
        this.releaseReader();
        return batch;
      }
      if (untilHealth <= 0) return [];
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.queue.length > 0 ? 20 : Math.max(1, untilHealth));
        this.wakeApplier = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeApplier = undefined;
    }
  }

  /** Waits `ms`, or less if stop() or a command wakes the loop. */
  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeApplier = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeApplier = undefined;
  }

  private releaseReader(): void {
    const r = this.readerSpace;
    this.readerSpace = undefined;
    r?.();
  }

  private startReader(): void {
    const gen = ++this.generation;
    const after = this.lowestProcessed();
    this.queue = [];
    this.readerError = undefined;
    this.lastRead = after;
    this.firstRead = undefined;
    this.readCount = 0;
    const active = this.slots.some((s) => !s.failed);
    if (!active) return;
    const sub = this.events.subscribeToAll({ after });
    this.sub = sub;
    const maxQueue = this.batchSize * 4;
    void (async () => {
      try {
        for await (const e of sub) {
          if (gen !== this.generation) return;
          this.queue.push(e);
          this.lastRead = e.position;
          this.firstRead ??= e.position;
          this.readCount++;
          if (this.head === undefined || e.position > this.head) this.head = e.position;
          if (this.queue.length === 1 || this.queue.length >= this.batchSize || e.position >= this.head) this.wakeApplier?.();
          while (this.queue.length >= maxQueue && gen === this.generation) {
            await new Promise<void>((r) => (this.readerSpace = r));
          }
        }
        if (gen === this.generation && this.running) this.readerError = new Error("the log subscription ended");
      } catch (err) {
        if (gen === this.generation) this.readerError = err;
      }
      this.wakeApplier?.();
    })();
  }

  private async stopReader(): Promise<void> {
    this.generation++;
    const sub = this.sub;
    this.sub = undefined;
    this.queue = [];
    this.releaseReader();
    await sub?.close().catch((err) => this.log.warn({ err }, "closing the log subscription failed"));
  }

  private async applyOnline(batch: RecordedEvent[]): Promise<void> {
    this.inFlight = batch;
    try {
      const last = batch.at(-1)!.position;
      const live = batch.length === 1 && this.head !== undefined && last >= this.head;
      await this.notifier?.prepare(batch);
      const active = this.slots.filter((s) => !s.failed && (s.processed === undefined || s.processed < last));
      const results = await Promise.allSettled(active.map((s) => this.applySlot(s, batch, !live || s.rebuildTarget !== undefined)));
      this.inFlight = [];
      await this.afterBatch(batch);
      const lost: Slot[] = [];
      let failure: unknown;
      results.forEach((r, i) => {
        if (r.status === "fulfilled") return;
        if (r.reason instanceof CheckpointMismatchError) this.onMismatch(active[i]!, r.reason, lost);
        else failure ??= r.reason;
      });
      if (lost.length) {
        // A store that lost one model lost them all (a restart, FLUSHALL): look at every one now,
        // before a waiter is told that a model with no write in this batch is up to date.
        await this.heal(await this.lostSlots(lost), "a write found the projection's checkpoint gone");
      }
      if (failure) throw failure;
    } finally {
      this.inFlight = [];
    }
  }

  /** Projects the batch for one model and commits it with the checkpoint (or only moves it in memory). */
  private async applySlot(s: Slot, batch: readonly RecordedEvent[], persist: boolean): Promise<void> {
    const last = batch.at(-1)!.position;
    const writes = this.project(s, batch);
    if (writes === undefined) return;
    if (writes.length === 0 && !persist) {
      s.processed = last;
      return;
    }
    await this.store.applyBatch(s.projection.name, writes, last, s.stored ?? null);
    s.stored = s.processed = last;
  }

  /** The writes of the events the model has not applied; undefined when `project` threw. */
  private project(s: Slot, batch: readonly RecordedEvent[]): Write[] | undefined {
    const writes: Write[] = [];
    for (const e of batch) {
      if (s.processed !== undefined && e.position <= s.processed) continue;
      if (!s.types.has(e.type)) continue;
      try {
        for (const w of s.projection.project(e)) writes.push(w);
      } catch (err) {
        s.failed = `${(err as Error).message} (event ${e.id} at ${e.position}, ${e.type})`;
        this.log.error({ err, projection: s.projection.name, event: e.id, position: e.position.toString() }, "projection failed; stopped");
        return undefined;
      }
    }
    return writes;
  }

  private async afterBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const committed = this.lowestProcessed();
    await this.notifier?.flush(committed);
    const pos = batch.at(-1)!.position;
    for (const r of [...this.rebuilds]) {
      r.events += batch.length;
      r.onProgress?.({
        projections: r.slots.map((s) => s.projection.name),
        position: pos.toString(),
        headPosition: this.head?.toString() ?? null,
        events: r.events,
        elapsedMs: this.now() - r.startedAt,
      });
    }
    this.settleProgress();
  }

  /** Resolves waiters and rebuilds that are done; tracks since when the runner is behind. */
  private settleProgress(): void {
    for (const s of this.slots) {
      if (s.rebuildTarget !== undefined && (s.rebuildTarget === null || (s.processed !== undefined && s.processed >= s.rebuildTarget))) {
        s.rebuildTarget = undefined;
      }
    }
    for (const r of [...this.rebuilds]) {
      if (r.slots.every((s) => s.rebuildTarget === undefined || s.failed)) {
        this.rebuilds.splice(this.rebuilds.indexOf(r), 1);
        this.log.info({ projections: r.slots.map((s) => s.projection.name), events: r.events, ms: this.now() - r.startedAt }, "rebuild done");
        r.resolve();
      }
    }
    for (const w of [...this.waiters]) {
      if (this.reached(w.position)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        this.settle(w);
      }
    }
    const low = this.lowestProcessed();
    const behind = this.head !== undefined && (low === undefined || low < this.head);
    if (!behind) this.behindSince = undefined;
    else this.behindSince ??= this.now();
  }

  private async runCommands(): Promise<void> {
    while (this.commands.length > 0) {
      const { slots, rebuild } = this.commands.shift()!;
      try {
        await this.resetSlots(slots, "rebuild requested");
        rebuild.startedAt = this.now();
        this.rebuilds.push(rebuild);
        this.settleProgress();
      } catch (err) {
        rebuild.reject(err);
      }
    }
  }

  /** Drops models and replays them from the start of the log, never notifying old binds again. */
  private async resetSlots(slots: readonly Slot[], reason: string): Promise<void> {
    this.notifier?.raiseFloor(this.highestProcessed());
    this.head = await this.events.headPosition();
    for (const s of slots) {
      await this.store.drop(s.projection.name);
      s.processed = s.stored = undefined;
      s.failed = undefined;
      s.rebuildTarget = this.head ?? null;
    }
    this.log.warn({ projections: slots.map((s) => s.projection.name), reason, head: this.head?.toString() }, "rebuilding read models");
    this.needRestart = true;
  }

  private async heal(lost: Slot[], reason: string): Promise<void> {
    await this.resetSlots(lost, `the read store lost their data (${reason})`);
  }

  private onMismatch(s: Slot, err: CheckpointMismatchError, lost: Slot[]): void {
    if (err.actual === undefined) {
      lost.push(s);
      return;
    }
    // Another writer, or a store restored from an older snapshot: resume from what it holds.
    this.log.warn({ projection: s.projection.name, expected: s.stored?.toString(), actual: err.actual.toString() }, "checkpoint moved under the runner; resuming from it");
    s.stored = s.processed = err.actual;
    this.needRestart = true;
  }

  /** Refreshes the head, checks each model's marker, saves checkpoints moved without writes. */
  private async healthCheck(): Promise<void> {
    this.lastHealth = this.now();
    const head = await this.events.headPosition();
    if (head !== undefined && (this.head === undefined || head > this.head)) this.head = head;
    const lost = await this.lostSlots([]);
    if (lost.length) {
      await this.heal(lost, "its checkpoint marker is missing");
      return;
    }
    await this.saveCheckpoints();
    this.settleProgress();
  }

  /** `known` plus every model whose checkpoint marker is gone; adopts checkpoints that moved. */
  private async lostSlots(known: readonly Slot[]): Promise<Slot[]> {
    const cps = await this.store.getCheckpoints(this.slots.map((s) => s.projection.name));
    const lost = [...known];
    this.slots.forEach((s, i) => {
      const actual = cps[i];
      if (s.failed || lost.includes(s) || actual === s.stored) return;
      if (actual === undefined) lost.push(s);
      else this.onMismatch(s, new CheckpointMismatchError(s.projection.name, s.stored, actual, actual), lost);
    });
    return lost;
  }

  private async saveCheckpoints(): Promise<void> {
    const lost: Slot[] = [];
    await Promise.all(
      this.slots.map(async (s) => {
        if (s.failed || s.processed === undefined || (s.stored !== undefined && s.stored >= s.processed)) return;
        try {
          await this.store.applyBatch(s.projection.name, [], s.processed, s.stored ?? null);
          s.stored = s.processed;
        } catch (err) {
          if (err instanceof CheckpointMismatchError) this.onMismatch(s, err, lost);
          else throw err;
        }
      }),
    );
    if (lost.length) await this.heal(lost, "saving a checkpoint found it gone");
  }

  // ---- rebuild while stopped -----------------------------------------------------------------

  private async rebuildStopped(slots: Slot[], onProgress?: (p: RebuildProgress) => void): Promise<void> {
    const startedAt = this.now();
    for (const s of slots) {
      await this.store.drop(s.projection.name);
      s.processed = s.stored = undefined;
      s.failed = undefined;
    }
    this.head = await this.events.headPosition();
    let after: bigint | undefined;
    let events = 0;
    // Batches in flight: batch N+1 is read, projected and sent while the store applies N (the
    // adapters apply calls in order; if N fails, N+1 fails its checkpoint guard). Three rather
    // than two: node and Redis take turns on shared cores, and a deeper queue keeps both busy.
    const committing: Array<Promise<unknown>> = [];
    for (;;) {
      const page = await this.events.readAll({ after, maxCount: this.rebuildBatchSize });
      if (page.length === 0) break;
      const last = page.at(-1)!.position;
      const work = slots.flatMap((s) => {
        if (s.failed) return [];
        const writes = this.project(s, page);
        return writes === undefined ? [] : [{ s, writes, expected: s.processed ?? null }];
      });
      for (const w of work) w.s.processed = last;
      const sending = Promise.all(
        work.map(async ({ s, writes, expected }) => {
          await this.store.applyBatch(s.projection.name, writes, last, expected);
          s.stored = last;
        }),
      );
      sending.catch(() => undefined); // awaited below; avoid an unhandled rejection meanwhile
      committing.push(sending);
      if (committing.length >= IN_FLIGHT) await committing.shift();
      after = last;
      events += page.length;
      if (this.head === undefined || last > this.head) this.head = last;
      onProgress?.({
        projections: slots.map((s) => s.projection.name),
        position: last.toString(),
        headPosition: this.head.toString(),
        events,
        elapsedMs: this.now() - startedAt,
      });
    }
    for (const c of committing) await c;
    const failed = slots.filter((s) => s.failed);
    if (failed.length) throw new Error(`rebuild: ${failed.map((s) => `${s.projection.name}: ${s.failed}`).join("; ")}`);
  }

  // ---- helpers -------------------------------------------------------------------------------

  private pick(names?: readonly string[]): Slot[] {
    if (!names) return [...this.slots];
    return names.map((n) => {
      const s = this.slots.find((x) => x.projection.name === n);
      if (!s) throw new Error(`no projection named ${n}`);
      return s;
    });
  }

  private reached(position: bigint): boolean {
    return this.slots.every((s) => s.failed || (s.processed !== undefined && s.processed >= position));
  }

  private lowestProcessed(): bigint | undefined {
    let low: bigint | undefined;
    let first = true;
    for (const s of this.slots) {
      if (s.failed) continue;
      if (s.processed === undefined) return undefined;
      if (first || s.processed < low!) low = s.processed;
      first = false;
    }
    return low;
  }

  private highestProcessed(): bigint | undefined {
    let high: bigint | undefined;
    for (const s of this.slots) if (s.processed !== undefined && (high === undefined || s.processed > high)) high = s.processed;
    return high;
  }

  /**
   * Events the reader has not reached yet. Positions are not dense (adapters may leave gaps), so
   * the count is estimated from the density read so far (events per position unit); exact once
   * the reader reached the head.
   */
  private unreadEstimate(): { events: number; exact: boolean } {
    if (this.head === undefined || (this.lastRead !== undefined && this.lastRead >= this.head)) return { events: 0, exact: true };
    const lastRead = this.lastRead ?? -1n;
    const span = this.firstRead === undefined ? 0 : Number(lastRead - this.firstRead);
    const density = this.readCount > 1 && span > 0 ? Math.min(1, (this.readCount - 1) / span) : 1;
    return { events: Math.max(1, Math.ceil(Number(this.head - lastRead) * density)), exact: false };
  }

  private settle(w: Waiter, err?: unknown): void {
    if (w.timer) clearTimeout(w.timer);
    if (err) w.reject(err);
    else w.resolve();
  }
}

/** Index of the first event after `position` in a position-ordered list. */
function firstAfter(events: readonly RecordedEvent[], position: bigint | undefined): number {
  if (position === undefined) return 0;
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (events[mid]!.position <= position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}


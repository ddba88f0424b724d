/**
 * A checkpointed follower of the event log, for process managers that act on the outside world
 * (the Placement sync, the Nova notifier). It knows nothing of what it feeds.
 *
 * - It subscribes to the whole log after its checkpoint (catch up, then live: no gap, no duplicate)
 *   and hands the events that match its filter to `handle` in batches, oldest first, one batch at
 *   a time. A batch is as large as what has arrived while the previous one was handled (up to
 *   `maxBatch`), so a backlog goes in large batches and a trickle in small ones (with `settle`,
 *   the events of one commit go in one batch).
 * - After `handle` resolves, the follower moves its checkpoint. Where it is kept (`checkpointIn`):
 *   - "read-store" (the default): ReadStore.applyBatch under its own name, with the writes `handle`
 *     returned (the handler's own durable state) in the same atomic step, after every batch; the
 *     checkpoint covers the events that did not match too (after `idleCommitMs`). Lost with the
 *     store (memory in the embedded mode, a flushed Redis): the follower then starts over.
 *   - "event-log": events in the log itself (event-log-checkpoint.ts), with the handler's small
 *     `snapshot()` in each: durable with the log. Every save is an event the follower then sees, so
 *     it never saves for events that did not match (no idle commits), saves at most once per
 *     `coalesceMs` (a crash hands again at most that much), and once at stop().
 * - A lost subscription (a connection blip, a leader change) is opened again after the last event
 *   it delivered, with backoff (ResumingSubscription): the queue and the handler's state are kept,
 *   and the status says "retrying" with the outage until it is restored.
 * - When `handle` throws (the target is down), the same batch is handed again after a backoff
 *   (p-retry, exponential, forever) until it succeeds or the follower stops: nothing is skipped.
 *   A handler must therefore be idempotent; a batch may also come again after a crash, from the
 *   checkpoint.
 * - When the checkpoint moved under it (lost with the store, or another instance), the follower
 *   starts over from whatever the store holds: from the beginning when it holds nothing. Each
 *   (re)start from the stored checkpoint calls `resume` first, with the state saved with it.
 * - status() gives lag and the last error; the status is also published to the ReadStore
 *   (status.ts) so a CLI in another process can show it.
 */
import { setMaxListeners } from "node:events";
import { matchesFilter } from "../../infra/eventstore/port.js";
import { keyPrefix } from "../../infra/readstore/keys-and-cursors.js";
import { BatchQueue } from "./batch-queue.js";
import { BatchWorker, Restart } from "./batch-worker.js";
import { CheckpointSaves } from "./checkpoint-saves.js";
import { EventLogCheckpoint } from "./event-log-checkpoint.js";
import { withDefaults, type LogFollowerOptions, type ResolvedFollowerOptions } from "./options.js";
import { PositionWaiters } from "./position-waiters.js";
import { ReadStoreCheckpoint } from "./read-store-checkpoint.js";
import { ResumingSubscription } from "./resuming-subscription.js";
import { Retries } from "./retries.js";
import { StatusPublisher, type FollowerState, type FollowerStatus } from "./status.js";

export class LogFollower {
  private readonly opts: ResolvedFollowerOptions;
  private readonly saves: CheckpointSaves;
  /** How far everything is handled (recorded or not), and who waits for it. */
  private readonly progress: PositionWaiters;
  private readonly queue: BatchQueue;
  private readonly worker: BatchWorker;
  private readonly retries: Retries;
  private readonly publisher: StatusPublisher;
  private running = false;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  private sub: ResumingSubscription | undefined;
  private state: FollowerState = "stopped";
  private head: bigint | undefined;
  /** The head when the follower last (re)started: it is catching up until it has seen it. */
  private startHead: bigint | undefined;
  /** Failed starts (checkpoint or head unreadable) since an event last came through. */
  private runFailures = 0;
  private lastError: { message: string; at: string } | null = null;
  private statusTimer: NodeJS.Timeout | undefined;

  constructor(options: LogFollowerOptions) {
    this.opts = withDefaults(options);
    const keeper = this.opts.checkpointIn === "event-log" ? new EventLogCheckpoint(options.events, options.name) : new ReadStoreCheckpoint(options.checkpoints, options.name);
    this.saves = new CheckpointSaves(keeper, this.opts.coalesceMs, () => this.opts.snapshot?.());
    this.publisher = new StatusPublisher(options.checkpoints, options.name);
    this.progress = new PositionWaiters(options.name);
    this.retries = new Retries(options.backoff, (err, attempt, context) => {
      this.failed(err);
      this.opts.log.warn({ follower: this.name, ...context, attempt, err: err.message }, "attempt failed; retrying after a backoff");
    });
    this.queue = new BatchQueue(this.opts.bufferLimit);
    this.worker = new BatchWorker(this.opts, this.queue, this.saves, this.progress, this.retries);
    keyPrefix(options.name);
  }

  get name(): string {
    return this.opts.name;
  }

  /** Starts following; resolves once the checkpoint is read and the subscription open, or that failed once (it goes on trying). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.state = "starting";
    let opened!: () => void;
    const ready = new Promise<void>((r) => (opened = r));
    this.loop = this.run(opened);
    if (this.opts.statusEveryMs > 0) {
      this.statusTimer = setInterval(() => void this.tick(), this.opts.statusEveryMs);
      this.statusTimer.unref();
    }
    await Promise.race([ready, this.loop]);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.abort.abort(new Error(`${this.name} stopped`));
    clearInterval(this.statusTimer);
    this.queue.wake();
    await this.sub?.close().catch(() => undefined);
    await this.loop;
    await this.saveAtStop();
    this.state = "stopped";
    this.progress.rejectAll(new Error(`${this.name} stopped`));
    if (this.opts.statusEveryMs > 0) await this.publisher.publish(() => this.status());
  }

  status(): FollowerStatus {
    const pending = this.queue.pending;
    const oldest = this.queue.oldest;
    const now = Date.now();
    const seen = this.queue.seen;
    const behind = this.startHead !== undefined && (seen === undefined || seen < this.startHead);
    let state = this.state;
    const outage = this.sub?.outage;
    const failing = this.retries.count + this.runFailures + (outage?.attempts ?? 0);
    if (state !== "stopped") state = failing > 0 ? "retrying" : state === "starting" ? state : behind || pending > this.opts.maxBatch ? "catching-up" : "live";
    const lastError = outage ? { message: outage.lastError, at: outage.since } : this.lastError;
    const holding = failing > 0 && lastError !== null;
    return {
      name: this.name,
      state,
      checkpoint: this.saves.position?.toString() ?? null,
      headPosition: this.head?.toString() ?? null,
      lagEvents: pending,
      lagEventsExact: !behind,
      lagMs: oldest ? Math.max(0, now - oldest.recordedAt.getTime()) : 0,
      retries: failing,
      lastError,
      ...(holding ? { error: lastError.message } : {}),
      ...(outage ? { outage } : {}),
      at: new Date(now).toISOString(),
    };
  }

  /** Whether every event up to `position` is handled (recorded or not needing it). */
  handled(position: bigint): boolean {
    return this.progress.reached(position);
  }

  /** Resolves once every event up to `position` is handled (recorded or not needing it). */
  waitFor(position: bigint, timeoutMs = 30_000): Promise<void> {
    if (this.progress.reached(position)) return Promise.resolve();
    if (!this.running) return Promise.reject(new Error(`${this.name} is not running`));
    return this.progress.wait(position, timeoutMs);
  }

  /** Resolves once everything in the log as of now is handled. */
  async caughtUp(timeoutMs?: number): Promise<void> {
    const head = await this.opts.events.headPosition();
    if (head !== undefined) await this.waitFor(head, timeoutMs);
  }

  /**
   * Resolves once the follower waits for new events, with the ms until it saves its checkpoint then
   * (undefined: not before an event matches): "no save comes" is then known without waiting for time.
   */
  nextWait(): Promise<number | undefined> {
    return this.worker.nextWait();
  }

  // ---- the loop -------------------------------------------------------------------------------

  private async run(opened: () => void): Promise<void> {
    while (this.running) {
      try {
        await this.follow(opened);
      } catch (err) {
        if (!this.running) break;
        if (err instanceof Restart) continue;
        // Failures to start (the checkpoint or the head unreadable). A lost subscription is opened
        // again by ResumingSubscription; the handler's failures are retried in place, batch by batch.
        opened();
        this.runFailures++;
        this.failed(err);
        this.opts.log.warn({ follower: this.name, attempt: this.runFailures, err: (err as Error).message }, "following the log failed; starting over after a backoff");
        await this.sleep(this.retries.delay(this.runFailures));
      }
    }
  }

  /** One subscription's life: from the stored checkpoint until a failure, a restart or the stop. */
  private async follow(opened: () => void): Promise<void> {
    const [{ position: checkpoint, state }, head] = await Promise.all([this.saves.load(), this.opts.events.headPosition()]);
    if (!this.running) return;
    this.opts.resume?.(checkpoint, state);
    if (this.saves.position !== undefined && checkpoint === undefined) {
      this.opts.log.warn({ follower: this.name, was: this.saves.position.toString() }, "checkpoint lost: following the log again from the beginning");
    }
    this.saves.restartAt(checkpoint);
    this.progress.restartAt(checkpoint);
    this.queue.restartAt(checkpoint);
    this.head = head;
    this.startHead = head;
    this.retries.count = 0;
    this.state = "catching-up";
    const sub = new ResumingSubscription({ name: this.name, events: this.opts.events, after: checkpoint, log: this.opts.log, backoff: this.opts.backoff, onChange: () => void this.tick() });
    this.sub = sub;
    // Ends this run's worker and its retries (not the follower) when the pump fails.
    const run = new AbortController();
    // A handler may have many requests in flight, each listening for the abort.
    setMaxListeners(0, run.signal);
    const onStop = () => run.abort(this.abort.signal.reason);
    this.abort.signal.addEventListener("abort", onStop, { once: true });
    opened();
    this.opts.log.info({ follower: this.name, checkpoint: checkpoint?.toString() ?? null, checkpointIn: this.saves.where, head: head?.toString() ?? null }, "following the event log");
    const pump = this.pump(sub, run.signal);
    const work = this.worker.work(run.signal);
    try {
      await Promise.race([work, pump]);
    } finally {
      run.abort(new Restart("run ended"));
      this.abort.signal.removeEventListener("abort", onStop);
      this.queue.wake();
      await sub.close().catch(() => undefined);
      await Promise.allSettled([work, pump]);
      this.sub = undefined;
      this.queue.clear();
    }
  }

  /** Reads the subscription into the queue, pausing while the queue is full. */
  private async pump(sub: ResumingSubscription, signal: AbortSignal): Promise<void> {
    for await (const e of sub) {
      if (signal.aborted) return;
      this.runFailures = 0;
      if (this.head === undefined || e.position > this.head) this.head = e.position;
      const matches = matchesFilter(e, this.opts.filter);
      // Nothing matching is waiting: everything delivered is handled.
      if (!matches && this.queue.idle) this.progress.handled(e.position);
      await this.queue.deliver(e, matches, signal);
    }
    if (!signal.aborted) throw new Error("the event log subscription ended");
  }

  /** event-log: one last save of everything handled (once; a refusal or a failure is logged, the next start resends). */
  private async saveAtStop(): Promise<void> {
    const upTo = this.progress.upTo;
    try {
      await this.saves.saveAtStop(upTo);
    } catch (err) {
      this.opts.log.warn({ follower: this.name, upTo: String(upTo), err: (err as Error).message }, "could not save the checkpoint at stop: the next start hands again what came after the last one");
    }
  }

  private failed(err: unknown): void {
    this.lastError = { message: err instanceof Error ? err.message : String(err), at: new Date().toISOString() };
    void this.tick();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.abort.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }

  // ---- status published for other processes ------------------------------------------------------

  private async tick(): Promise<void> {
    if (!this.running) return;
    try {
      this.head = (await this.opts.events.headPosition()) ?? this.head;
    } catch {
      // the status says what it knew
    }
    if (this.opts.statusEveryMs > 0) await this.publisher.publish(() => this.status());
  }
}

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
import pRetry, { AbortError } from "p-retry";
import { matchesFilter, type EventFilter, type EventStore, type RecordedEvent, type Subscription } from "../eventstore/port.js";
import type { Logger } from "../logger.js";
import { keyPrefix, type ReadStore, type Write } from "../readstore/port.js";
import { CheckpointMovedError, type FollowerCheckpoint } from "./checkpoint.js";
import { EventLogCheckpoint } from "./event-log-checkpoint.js";
import { ReadStoreCheckpoint } from "./read-store-checkpoint.js";
import { StatusPublisher, type FollowerState, type FollowerStatus } from "./status.js";

export interface LogFollowerOptions {
  /** The follower's name (a projection name: [a-z][a-z0-9-]*): its checkpoint's and its status's. */
  name: string;
  events: EventStore;
  /** The ReadStore: where the checkpoint is kept in the "read-store" mode, and the status published. */
  checkpoints: ReadStore;
  /** Where the checkpoint is kept (default "read-store"; see the top of this file). */
  checkpointIn?: "read-store" | "event-log";
  filter?: EventFilter;
  /**
   * Acts on a batch (idempotently). Resolves with writes under `{<name>}:` to record atomically
   * with the checkpoint ("read-store" only), or nothing. Throws to have the same batch handed
   * again after a backoff.
   */
  handle(batch: readonly RecordedEvent[], signal: AbortSignal): Promise<readonly Write[] | void>;
  /** "event-log": the handler's state to save with the checkpoint (small JSON; taken between batches). */
  snapshot?(): unknown;
  /** Called at each (re)start from the stored checkpoint, before its first batch, with the state saved with it. */
  resume?(from: bigint | undefined, state: unknown): void;
  log: Logger;
  /** Most events per batch (default 500). */
  maxBatch?: number;
  /**
   * Let the subscription hand over what it already holds (one turn of the event loop) before a
   * batch is taken, so that the events of one commit go in one batch (default false).
   */
  settle?: boolean;
  /** Matching events read ahead of the handler before reading pauses (default 5000). */
  bufferLimit?: number;
  /** Backoff between attempts while the handler or the store fails (default 200 ms to 30 s). */
  backoff?: { minMs?: number; maxMs?: number };
  /** "read-store": how long the follower waits before recording a checkpoint that only passed non-matching events (default 1000 ms). */
  idleCommitMs?: number;
  /** "event-log": the least time between two saves (default 1000 ms). */
  coalesceMs?: number;
  /** How often the head is refreshed and the status published (default 1000 ms; 0: never published). */
  statusEveryMs?: number;
}

interface Waiter {
  position: bigint;
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

class Restart extends Error {}

export class LogFollower {
  private readonly opts: Required<Omit<LogFollowerOptions, "filter" | "backoff" | "snapshot" | "resume" | "settle">> & Pick<LogFollowerOptions, "filter" | "snapshot" | "resume" | "settle">;
  private readonly keeper: FollowerCheckpoint;
  private readonly minBackoff: number;
  private readonly maxBackoff: number;
  private running = false;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  private sub: Subscription | undefined;
  private state: FollowerState = "stopped";
  private checkpoint: bigint | undefined;
  /** "event-log": handled and not saved yet (the next save's position); when the last save was. */
  private unsaved: bigint | undefined;
  private savedAt = 0;
  /** Everything up to here is handled (recorded or not). */
  private handledUpTo: bigint | undefined;
  /** Newest position the subscription delivered. */
  private seen: bigint | undefined;
  private head: bigint | undefined;
  /** The head when the follower last (re)started: it is catching up until it has seen it. */
  private startHead: bigint | undefined;
  private buffer: RecordedEvent[] = [];
  private inFlight: readonly RecordedEvent[] = [];
  /** Failed attempts at the current batch or commit. */
  private retries = 0;
  /** Failed subscriptions (store or log unreachable) since an event last came through. */
  private runFailures = 0;
  private lastError: { message: string; at: string } | null = null;
  private wakeWorker: (() => void) | undefined;
  private wakePump: (() => void) | undefined;
  private waiters: Waiter[] = [];
  private statusTimer: NodeJS.Timeout | undefined;
  private readonly publisher: StatusPublisher;

  constructor(options: LogFollowerOptions) {
    // `??`, not a spread: an option passed as undefined (a caller's unset tuning) takes the default.
    this.opts = {
      ...options,
      maxBatch: options.maxBatch ?? 500,
      bufferLimit: options.bufferLimit ?? 5000,
      idleCommitMs: options.idleCommitMs ?? 1000,
      coalesceMs: options.coalesceMs ?? 1000,
      statusEveryMs: options.statusEveryMs ?? 1000,
      checkpointIn: options.checkpointIn ?? "read-store",
    };
    this.keeper = this.opts.checkpointIn === "event-log" ? new EventLogCheckpoint(options.events, options.name) : new ReadStoreCheckpoint(options.checkpoints, options.name);
    this.publisher = new StatusPublisher(options.checkpoints, options.name);
    this.minBackoff = options.backoff?.minMs ?? 200;
    this.maxBackoff = Math.max(options.backoff?.maxMs ?? 30_000, this.minBackoff);
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
    this.wakeWorker?.();
    this.wakePump?.();
    await this.sub?.close().catch(() => undefined);
    await this.loop;
    await this.saveAtStop();
    this.state = "stopped";
    const stopped = new Error(`${this.name} stopped`);
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(stopped);
    }
    if (this.opts.statusEveryMs > 0) await this.publisher.publish(() => this.status());
  }

  status(): FollowerStatus {
    const pending = this.inFlight.length + this.buffer.length;
    const oldest = this.inFlight[0] ?? this.buffer[0];
    const now = Date.now();
    const behind = this.startHead !== undefined && (this.seen === undefined || this.seen < this.startHead);
    let state = this.state;
    const failing = this.retries + this.runFailures;
    if (state !== "stopped") state = failing > 0 ? "retrying" : state === "starting" ? state : behind || pending > this.opts.maxBatch ? "catching-up" : "live";
    const holding = failing > 0 && this.lastError !== null;
    return {
      name: this.name,
      state,
      checkpoint: this.checkpoint?.toString() ?? null,
      headPosition: this.head?.toString() ?? null,
      lagEvents: pending,
      lagEventsExact: !behind,
      lagMs: oldest ? Math.max(0, now - oldest.recordedAt.getTime()) : 0,
      retries: failing,
      lastError: this.lastError,
      ...(holding ? { error: this.lastError!.message } : {}),
      at: new Date(now).toISOString(),
    };
  }

  /** Resolves once every event up to `position` is handled (recorded or not needing it). */
  waitFor(position: bigint, timeoutMs = 30_000): Promise<void> {
    if (this.handledUpTo !== undefined && this.handledUpTo >= position) return Promise.resolve();
    if (!this.running) return Promise.reject(new Error(`${this.name} is not running`));
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        position,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((x) => x !== w);
          reject(new Error(`${this.name} did not reach position ${position} within ${timeoutMs} ms (at ${this.handledUpTo ?? "none"})`));
        }, timeoutMs),
      };
      this.waiters.push(w);
    });
  }

  /** Resolves once everything in the log as of now is handled. */
  async caughtUp(timeoutMs?: number): Promise<void> {
    const head = await this.opts.events.headPosition();
    if (head !== undefined) await this.waitFor(head, timeoutMs);
  }

  // ---- the loop -------------------------------------------------------------------------------

  private async run(opened: () => void): Promise<void> {
    while (this.running) {
      try {
        await this.follow(opened);
      } catch (err) {
        if (!this.running) break;
        if (err instanceof Restart) continue;
        // Store and subscription failures (the handler's are retried in place, batch by batch).
        opened();
        this.runFailures++;
        this.failed(err);
        this.opts.log.warn({ follower: this.name, attempt: this.runFailures, err: (err as Error).message }, "following the log failed; starting over after a backoff");
        await this.sleep(this.backoffFor(this.runFailures));
      }
    }
  }

  /** One subscription's life: from the stored checkpoint until a failure, a restart or the stop. */
  private async follow(opened: () => void): Promise<void> {
    const [{ position: checkpoint, state }, head] = await Promise.all([this.keeper.load(), this.opts.events.headPosition()]);
    if (!this.running) return;
    this.opts.resume?.(checkpoint, state);
    if (this.checkpoint !== undefined && checkpoint === undefined) {
      this.opts.log.warn({ follower: this.name, was: this.checkpoint.toString() }, "checkpoint lost: following the log again from the beginning");
    }
    this.checkpoint = checkpoint;
    this.unsaved = undefined;
    this.handledUpTo = checkpoint;
    this.seen = checkpoint;
    this.head = head;
    this.startHead = head;
    this.buffer = [];
    this.retries = 0;
    this.state = "catching-up";
    const sub = this.opts.events.subscribeToAll({ after: checkpoint });
    this.sub = sub;
    // Ends this run's worker and its retries (not the follower) when the pump fails.
    const run = new AbortController();
    // A handler may have many requests in flight, each listening for the abort.
    setMaxListeners(0, run.signal);
    const onStop = () => run.abort(this.abort.signal.reason);
    this.abort.signal.addEventListener("abort", onStop, { once: true });
    opened();
    this.opts.log.info({ follower: this.name, checkpoint: checkpoint?.toString() ?? null, checkpointIn: this.keeper.where, head: head?.toString() ?? null }, "following the event log");
    const pump = this.pump(sub, run.signal);
    const work = this.work(run.signal);
    try {
      await Promise.race([work, pump]);
    } finally {
      run.abort(new Restart("run ended"));
      this.abort.signal.removeEventListener("abort", onStop);
      this.wakeWorker?.();
      this.wakePump?.();
      await sub.close().catch(() => undefined);
      await Promise.allSettled([work, pump]);
      this.sub = undefined;
      this.inFlight = [];
      this.buffer = [];
    }
  }

  /** Reads the subscription into the buffer, pausing while the buffer is full. */
  private async pump(sub: Subscription, signal: AbortSignal): Promise<void> {
    for await (const e of sub) {
      if (signal.aborted) return;
      this.runFailures = 0;
      this.seen = e.position;
      if (this.head === undefined || e.position > this.head) this.head = e.position;
      if (matchesFilter(e, this.opts.filter)) this.buffer.push(e);
      else if (this.buffer.length === 0 && this.inFlight.length === 0) this.handled(e.position);
      this.wakeWorker?.();
      while (!signal.aborted && this.buffer.length >= this.opts.bufferLimit) await new Promise<void>((r) => (this.wakePump = r));
    }
    if (!signal.aborted) throw new Error("the event log subscription ended");
  }

  private async work(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted) return;
      if (this.buffer.length === 0 && this.keeper.where === "read-store") {
        // Record the checkpoint past an idle stretch of non-matching events.
        const idle = this.seen !== undefined && (this.checkpoint === undefined || this.seen > this.checkpoint);
        await this.nextWake(idle ? this.opts.idleCommitMs : undefined);
        if (signal.aborted) return;
        if (this.buffer.length === 0 && idle) await this.commit([], this.seen!, signal);
        continue;
      }
      if (this.buffer.length === 0) {
        // event-log: what came while a batch was in flight matched nothing (its own saves, say): handled.
        if (this.seen !== undefined) this.handled(this.seen);
        // Save what was handled once the last save is old enough (never for non-matching events alone).
        await this.nextWake(this.saveDueIn());
        if (signal.aborted) return;
        if (this.buffer.length === 0 && this.saveDueIn() === 0) await this.commit([], this.unsaved!, signal);
        continue;
      }
      if (this.opts.settle) {
        await new Promise((r) => setImmediate(r));
        if (signal.aborted) return;
      }
      const batch = this.buffer.splice(0, this.opts.maxBatch);
      this.wakePump?.();
      // Everything delivered so far is covered when no matching event is left behind.
      const upTo = this.buffer.length === 0 ? this.seen! : batch[batch.length - 1]!.position;
      this.inFlight = batch;
      const writes = await this.attempt(() => this.opts.handle(batch, signal), signal, { batch: batch.length, from: batch[0]!.position.toString() });
      if (this.keeper.where === "read-store") await this.commit(writes ?? [], upTo, signal);
      else {
        if (writes?.length) throw new Error(`${this.name}: a follower whose checkpoint is in the event log records no read-store writes (use snapshot)`);
        this.unsaved = upTo;
        this.handled(upTo);
        if (this.saveDueIn() === 0) await this.commit([], upTo, signal);
      }
      this.inFlight = [];
    }
  }

  /** event-log: ms until what was handled and not saved is due to be saved (`coalesceMs` after the last save); undefined: nothing to save. */
  private saveDueIn(): number | undefined {
    if (this.unsaved === undefined) return undefined;
    return Math.max(0, this.savedAt + this.opts.coalesceMs - Date.now());
  }

  private async commit(writes: readonly Write[], upTo: bigint, signal: AbortSignal): Promise<void> {
    await this.attempt(
      async () => {
        try {
          await this.keeper.save(upTo, { writes, state: this.opts.snapshot?.() });
        } catch (err) {
          if (!(err instanceof CheckpointMovedError)) throw err;
          this.opts.log.warn({ follower: this.name, err: err.message }, "the checkpoint moved under the follower: starting over from the stored one");
          throw new AbortError(new Restart(err.message));
        }
      },
      signal,
      { commit: upTo.toString() },
    );
    this.checkpoint = upTo;
    this.savedAt = Date.now();
    if (this.unsaved !== undefined && this.unsaved <= upTo) this.unsaved = undefined;
    this.handled(upTo);
  }

  /** event-log: one last save of everything handled (once; a refusal or a failure is logged, the next start resends). */
  private async saveAtStop(): Promise<void> {
    const upTo = this.handledUpTo;
    if (this.keeper.where !== "event-log" || upTo === undefined || (this.checkpoint !== undefined && upTo <= this.checkpoint)) return;
    try {
      await this.keeper.save(upTo, { writes: [], state: this.opts.snapshot?.() });
      this.checkpoint = upTo;
      this.unsaved = undefined;
    } catch (err) {
      this.opts.log.warn({ follower: this.name, upTo: upTo.toString(), err: (err as Error).message }, "could not save the checkpoint at stop: the next start hands again what came after the last one");
    }
  }

  /** Runs `fn` until it succeeds, backing off between failures; rejects when the run ends (or with an AbortError's cause). */
  private async attempt<T>(fn: () => Promise<T>, signal: AbortSignal, context: object): Promise<T> {
    const out = await pRetry(fn, {
      retries: Number.POSITIVE_INFINITY,
      factor: 2,
      minTimeout: this.minBackoff,
      maxTimeout: this.maxBackoff,
      randomize: true,
      signal,
      unref: true,
      onFailedAttempt: ({ error }) => {
        if (signal.aborted) return;
        this.retries++;
        this.failed(error);
        this.opts.log.warn({ follower: this.name, ...context, attempt: this.retries, err: error.message }, "attempt failed; retrying after a backoff");
      },
    });
    this.retries = 0;
    return out;
  }

  private failed(err: unknown): void {
    this.lastError = { message: err instanceof Error ? err.message : String(err), at: new Date().toISOString() };
    void this.tick();
  }

  private handled(position: bigint): void {
    if (this.handledUpTo !== undefined && this.handledUpTo >= position) return;
    this.handledUpTo = position;
    if (this.waiters.length === 0) return;
    this.waiters = this.waiters.filter((w) => {
      if (w.position > position) return true;
      clearTimeout(w.timer);
      w.resolve();
      return false;
    });
  }

  private nextWake(timeoutMs?: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(resolve, timeoutMs);
      this.wakeWorker = () => {
        clearTimeout(timer);
        this.wakeWorker = undefined;
        resolve();
      };
    });
  }

  private backoffFor(attempt: number): number {
    return Math.min(this.maxBackoff, this.minBackoff * 2 ** Math.max(0, attempt - 1));
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

import type { Application } from "../../app/application.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import { reportWhile, type Logger } from "../../infra/logger.js";
import { ResumingSubscription } from "../follower/resuming-subscription.js";
import { subscriptionStatus, type FollowerStatus } from "../follower/status.js";
import type { StateSnapshots } from "../follower/state-snapshots.js";
import { StateWriter } from "../follower/state-snapshots.js";
import { BINDER_PRINCIPAL, type Cause } from "../../app/arqs/bind-cause.js";
import { BINDER_STATE_VERSION, binderState, LostHolders, PendingBinds, ProgrammingRequests, type LostHolder, type PendingBind } from "./pending-binds.js";

export interface BinderOptions {
  store: EventStore;
  /** abandonProgramming: without it, requests are abandoned only by the binds that time out waiting for them. */
  app: Pick<Application, "allocateForArq" | "failBind"> & Partial<Pick<Application, "abandonProgramming">>;
  log: Logger;
  /** A bind not finished this long after it started (or after the binder started) fails with a reason. */
  bindTimeoutMs: number;
  /** How many allocations run at once. */
  concurrency?: number;
  now?: () => number;
  /** Runs before each allocation; tests use it to hold a bind up (a host that does not answer). */
  beforeAllocate?: (arqUuid: string) => Promise<void>;
  /** A bind that started while the binder was live ended: BOUND or BIND_FAILED, after `seconds` (metrics). */
  onBindResolved?: (outcome: "bound" | "failed", seconds: number) => void;
  /** Backoff between attempts to subscribe again after the log subscription is lost (default 200 ms to 30 s). */
  backoff?: { minMs?: number; maxMs?: number };
  /** Where its fold is kept across restarts (embedded mode): a start reads only the log after it. Without it, the whole log is folded. */
  snapshots?: StateSnapshots;
}

/**
 * The binder, a process manager: it reacts to ArqBindStarted by allocating an attach handle on the
 * host stream and recording BOUND or BIND_FAILED (Application.allocateForArq), and fails binds that
 * outlive BIND_TIMEOUT_S. A bind waiting for its region's programming is run again when the
 * request closes (programmed: BOUND; failed or abandoned: BIND_FAILED with the reason), and those
 * that waited for a partition to be made when the agent answers (made: BOUND; failed: BIND_FAILED); a request
 * that outlives BIND_TIMEOUT_S is abandoned, and a bind timing out abandons the request it waits for. Its state is a fold of the log: on start it folds the log into the binds
 * in flight, so an ARQ left in BIND_STARTED by a crash is finished after the restart; with
 * `snapshots`, from the last snapshot of that fold (state-snapshots.ts) instead of the log's start. Every step is
 * idempotent (allocation per ARQ, transitions with expected revisions), so repeating one is safe.
 *
 * A lost subscription to the log (a connection blip, a leader change) does not lose what it folded:
 * it reads on from the last event it applied (ResumingSubscription), so no event is applied twice
 * and none is missed, and binds and requests keep timing out meanwhile (their clocks are the
 * binder's, not the log's).
 */
export class Binder {
  private readonly pending = new PendingBinds();
  private readonly lost = new LostHolders();
  private readonly requests = new ProgrammingRequests();
  /** Binds to run again once their current run ends (their region's request closed meanwhile). */
  private readonly rerun = new Set<string>();
  private readonly abandoning = new Set<string>();
  private readonly queue: PendingBind[] = [];
  private readonly inFlight = new Set<string>();
  private readonly expiring = new Set<string>();
  private subscription?: ResumingSubscription;
  private writer?: StateWriter;
  /** The last event folded. */
  private last?: RecordedEvent;
  private timer?: NodeJS.Timeout;
  private live = false;
  private startedAt = 0;
  private loop?: Promise<void>;
  private idleWaiters: Array<() => void> = [];
  private pumpScheduled = false;
  private readonly now: () => number;
  private readonly concurrency: number;
  /** How often binds and requests are checked against their deadline. */
  private readonly tick: number;

  constructor(private readonly opts: BinderOptions) {
    this.now = opts.now ?? Date.now;
    this.concurrency = opts.concurrency ?? 32;
    this.tick = Math.max(50, Math.min(1000, opts.bindTimeoutMs / 4));
  }

  /** Folds the log up to its current head, then goes live; resolves once live. */
  async start(): Promise<void> {
    this.startedAt = this.now();
    const head = await this.opts.store.headPosition();
    const state = binderState(this.pending, this.lost, this.requests);
    const after = await this.opts.snapshots?.load("binder", BINDER_STATE_VERSION, state);
    if (this.opts.snapshots) this.writer = new StateWriter(this.opts.snapshots, "binder", BINDER_STATE_VERSION, () => this.last, state.lines);
    // Unfiltered so that reaching the head is observable even when the newest event is not an ARQ's.
    this.subscription = new ResumingSubscription({ name: "binder", events: this.opts.store, after, log: this.opts.log, backoff: this.opts.backoff });
    let resolveLive!: () => void;
    const live = new Promise<void>((r) => (resolveLive = r));
    if (head === undefined || (after !== undefined && after >= head)) this.goLive(resolveLive);
    this.loop = (async () => {
      for await (const e of this.subscription!) {
        this.last = e;
        if (this.live && this.opts.onBindResolved) this.observeResolved(e);
        const started = e.stream.startsWith("arq-") ? this.pending.apply(e) : undefined;
        if (started && this.live) this.enqueue(started);
        const lost = this.lost.apply(e);
        if (this.live) for (const l of lost) this.failLost(l);
        const waited = e.stream.startsWith("host-") ? [...this.requests.apply(e), ...partitionAnswered(e)] : [];
        if (this.live) for (const arqUuid of waited) this.runAgain(arqUuid);
        if (!this.live && e.position >= head!) this.goLive(resolveLive);
      }
    })().catch((err) => this.opts.log.error({ err }, "the binder stopped following the log: a bug; restart the binder"));
    this.timer = setInterval(() => this.expire(), this.tick);
    this.timer.unref();
    this.writer?.start(after);
    await reportWhile(live, 2000, () => this.opts.log.info({ head: head?.toString(), bindsInFlight: this.pending.size }, "binder: reading the log up to its head"));
  }

  /** ARQs in BIND_STARTED, as of the events the binder has read. */
  get bindsInFlight(): number {
    return this.pending.size;
  }

  /** The binder as a follower of the log (/readyz `followers`): how far it has read, and a lost subscription. */
  status(): FollowerStatus {
    return subscriptionStatus("binder", this.subscription, this.live);
  }

  /** Resolves when no bind is queued or running (tests and graceful shutdown). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight.size === 0 && !this.pumpScheduled) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.subscription?.close();
    await this.loop;
    await this.writer?.stop();
    await this.idle();
  }

  private observeResolved(e: RecordedEvent) {
    if (e.type !== "ArqBound" && e.type !== "ArqBindFailed") return;
    const bind = this.pending.get((e.data as { arqUuid: string }).arqUuid);
    if (bind) this.opts.onBindResolved!(e.type === "ArqBound" ? "bound" : "failed", (e.recordedAt.getTime() - bind.startedAt) / 1000);
  }

  private goLive(resolve: () => void) {
    if (this.live) return;
    this.live = true;
    for (const b of this.pending.all()) this.enqueue(b);
    for (const l of this.lost.all()) this.failLost(l);
    this.opts.log.info({ pending: this.pending.size }, "binder is live");
    resolve();
  }

  private enqueue(bind: PendingBind) {
    this.queue.push(bind);
    // Pump after the events already read are applied: a bind the API finished in the same commit
    // (ArqBindStarted, then ArqBound) has left `pending` by then and costs nothing.
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** A waiting bind's request closed: decide it again (now, or after the run that is deciding it). */
  private runAgain(arqUuid: string) {
    const bind = this.pending.get(arqUuid);
    if (!bind) return;
    if (this.inFlight.has(arqUuid)) this.rerun.add(arqUuid);
    else this.enqueue(bind);
  }

  private pump() {
    while (this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const bind = this.queue.shift()!;
      if (this.inFlight.has(bind.arqUuid) || !this.pending.has(bind.arqUuid)) continue;
      this.inFlight.add(bind.arqUuid);
      void this.run(bind)
        .finally(() => {
          this.inFlight.delete(bind.arqUuid);
          if (this.rerun.delete(bind.arqUuid) && this.pending.has(bind.arqUuid)) this.queue.push(bind);
          this.pump();
        })
        .catch((err) => this.opts.log.error({ err, arq: bind.arqUuid }, "bind step failed; it will be retried or time out"));
    }
    if (this.queue.length === 0 && this.inFlight.size === 0 && !this.pumpScheduled) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const r of w) r();
    }
  }

  private async run(bind: PendingBind) {
    try {
      await this.opts.beforeAllocate?.(bind.arqUuid);
      if (!this.pending.has(bind.arqUuid)) return;
      const result = await this.opts.app.allocateForArq(this.ctx(bind.cause), bind.arqUuid);
      if (!result.ok && result.waiting) this.opts.log.debug({ arq: bind.arqUuid }, "bind waits for its region's programming");
      else if (!result.ok) this.opts.log.info({ arq: bind.arqUuid, reason: result.reason }, "bind failed");
    } catch (err) {
      this.opts.log.error({ err, arq: bind.arqUuid }, "bind step failed; it will be retried or time out");
      setTimeout(() => this.pending.has(bind.arqUuid) && this.live && this.enqueue(bind), 500).unref();
    }
  }

  /** A BOUND ARQ whose handle is gone fails (no accelerator-request-bound: it is not a bind). */
  private failLost({ arqUuid, reason, cause }: LostHolder) {
    void this.opts.app
      .failBind(this.ctx(cause), arqUuid, reason, { fromBound: true })
      .catch((err) => this.opts.log.error({ err, arq: arqUuid }, "could not fail an ARQ whose device was lost"));
  }

  private expire() {
    if (!this.live) return;
    const now = this.now();
    const seconds = this.opts.bindTimeoutMs / 1000;
    // A request gets one tick more than its binds: a bind that times out abandons its own request
    // (with the bind's reason); this abandons what nothing waits for (an operator's, an orphan).
    for (const r of this.opts.app.abandonProgramming ? this.requests.all() : []) {
      const deadline = Math.max(r.requestedAt, this.startedAt) + this.opts.bindTimeoutMs + this.tick;
      if (now < deadline || this.abandoning.has(r.requestId)) continue;
      this.abandoning.add(r.requestId);
      const reason = `no programming result within ${seconds} s (BIND_TIMEOUT_S)`;
      void this.opts.app
        .abandonProgramming!(this.ctx(r.cause), { hostname: r.hostname, deployableUuid: r.deployableUuid, requestId: r.requestId, reason })
        .catch((err) => this.opts.log.error({ err, request: r.requestId }, "could not abandon a programming request"))
        .finally(() => this.abandoning.delete(r.requestId));
    }
    for (const b of this.pending.all()) {
      const deadline = Math.max(b.startedAt, this.startedAt) + this.opts.bindTimeoutMs;
      if (now < deadline || this.expiring.has(b.arqUuid)) continue;
      const reason = `bind did not complete within ${seconds} s (BIND_TIMEOUT_S)`;
      this.expiring.add(b.arqUuid);
      void this.opts.app
        .failBind(this.ctx(b.cause), b.arqUuid, reason, { abandonProgramming: true })
        .catch((err) => this.opts.log.error({ err, arq: b.arqUuid }, "could not fail a timed-out bind"))
        .finally(() => this.expiring.delete(b.arqUuid));
    }
  }

  /** A step answers an event: it carries that event's request (trace) and names the event as its cause. */
  private ctx(cause: Cause): CommandContext {
    return { principal: BINDER_PRINCIPAL, ...cause, at: new Date(this.now()).toISOString() };
  }
}

/** The ARQ whose bind waited for the partition the agent just made, or could not make. */
function partitionAnswered(e: RecordedEvent): string[] {
  if (e.type !== "PartitionCreated" && e.type !== "PartitionCreationFailed") return [];
  return [(e.data as { arqUuid: string }).arqUuid];
}

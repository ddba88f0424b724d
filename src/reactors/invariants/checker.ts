/**
 * The invariant checker, a reactor beside the binder: it follows the log (from its start, as the
 * binder does, so what a crash left half done before a restart is found after it; with `snapshots`,
 * from the last snapshot of its index instead of the log's start) and keeps an
 * index of each ARQ, its handles and its profile's record (arq-index.ts). An ARQ whose index shows
 * a violation (domain/arqs/invariants.ts) for longer than `graceMs` (a decision still being
 * appended, step by step, is left to finish) is checked on the streams and repaired through the
 * application (Application.repairArqInvariants): an orphaned allocation released, a BOUND ARQ
 * without its handle failed, an unrecorded ARQ recorded or its creation undone, a deleted one's
 * record removed. Each repair is idempotent and logged. It reads through a ResumingSubscription,
 * so a lost subscription is taken up again after the last event read.
 */
import type { Application } from "../../app/application.js";
import type { Repair } from "../../app/arqs/index.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { EventStore } from "../../infra/eventstore/port.js";
import type { Logger } from "../../infra/logger.js";
import { ResumingSubscription } from "../follower/resuming-subscription.js";
import { subscriptionStatus, type FollowerStatus } from "../follower/status.js";
import { StateWriter, type StateSnapshots } from "../follower/state-snapshots.js";
import { ARQ_INDEX_VERSION, ArqIndex } from "./arq-index.js";

export interface InvariantCheckerOptions {
  store: EventStore;
  app: Pick<Application, "repairArqInvariants">;
  log: Logger;
  /** How long a violation must last before it is repaired (a decision in flight finishes first). */
  graceMs: number;
  now?: () => number;
  /** After each repair that changed something (metrics). */
  onRepair?: (r: Repair) => void;
  /** Where its index is kept across restarts (embedded mode): a start reads only the log after it. Without it, the whole log is read. */
  snapshots?: StateSnapshots;
}

export class InvariantChecker {
  private readonly index = new ArqIndex();
  /** ARQ -> since when its index shows a violation. */
  private readonly suspects = new Map<string, number>();
  private readonly now: () => number;
  private subscription?: ResumingSubscription;
  private loop?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** Caught up with the log as it was at start. */
  private live = false;
  private last: bigint | undefined;
  private lastId: string | undefined;
  private writer?: StateWriter;
  private readonly positionWaiters: Array<{ at: bigint; resolve: () => void }> = [];
  private checking: Promise<Repair[]> | undefined;

  constructor(private readonly opts: InvariantCheckerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Reads the log up to its current head, then keeps following it; resolves once caught up. */
  async start(): Promise<void> {
    const head = await this.opts.store.headPosition();
    const snapshots = this.opts.snapshots;
    let restored: string[] = [];
    const state = { lines: () => this.index.lines(), restore: (lines: readonly string[]) => void (restored = this.index.restore(lines)) };
    const after = await snapshots?.load("invariant-checker", ARQ_INDEX_VERSION, state);
    for (const arqUuid of restored) this.suspect(arqUuid);
    this.last = after;
    if (snapshots) {
      const at = () => (this.last === undefined || this.lastId === undefined ? undefined : { position: this.last, id: this.lastId });
      this.writer = new StateWriter(snapshots, "invariant-checker", ARQ_INDEX_VERSION, at, state.lines);
      this.writer.start(after);
    }
    this.loop = this.follow(after);
    const tick = Math.max(100, Math.min(5000, this.opts.graceMs / 2));
    this.timer = setInterval(() => void this.checkDue(), tick);
    this.timer.unref();
    if (head !== undefined) await this.caughtUp(head);
    this.live = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.subscription?.close();
    await this.loop;
    await this.writer?.stop();
    await this.checking;
  }

  /** ARQs in violation as of the events read (a gauge). */
  get violations(): number {
    return this.suspects.size;
  }

  /** Resolves once the events up to `position` were read. */
  caughtUp(position: bigint): Promise<void> {
    if (this.last !== undefined && this.last >= position) return Promise.resolve();
    return new Promise((resolve) => this.positionWaiters.push({ at: position, resolve }));
  }

  /**
   * Checks and repairs the ARQs in violation for at least the grace period (`all`: every one, as
   * an operator's or a test's explicit run); the repairs done. One run at a time.
   */
  async checkDue(all = false): Promise<Repair[]> {
    if (this.checking) await this.checking.catch(() => undefined);
    this.checking = this.runChecks(all);
    try {
      return await this.checking;
    } finally {
      this.checking = undefined;
    }
  }

  private async runChecks(all: boolean): Promise<Repair[]> {
    const now = this.now();
    const done: Repair[] = [];
    for (const [arqUuid, since] of [...this.suspects]) {
      if (!all && now - since < this.opts.graceMs) continue;
      // Checked on the streams: until an event concerns it again (a repair's included), it is not suspected again.
      this.suspects.delete(arqUuid);
      try {
        const repairs = await this.opts.app.repairArqInvariants(this.ctx(), arqUuid, this.index.hostnames(arqUuid), this.index.claimedBy(arqUuid));
        for (const r of repairs) this.report(r);
        done.push(...repairs);
      } catch (err) {
        if (!this.suspects.has(arqUuid)) this.suspects.set(arqUuid, since);
        this.opts.log.error({ err, arq: arqUuid }, "invariant check failed; it will be tried again");
      }
    }
    return done;
  }

  private report(r: Repair) {
    if (r.action === "none") return;
    const fields = { arq: r.arqUuid, violation: r.violation, action: r.action, ...(r.hostname ? { hostname: r.hostname } : {}) };
    if (r.action === "left") this.opts.log.error(fields, "invariant violation that cannot be repaired safely: an operator must look at it");
    else this.opts.log.warn(fields, "invariant repaired");
    this.opts.onRepair?.(r);
  }

  private async follow(after: bigint | undefined): Promise<void> {
    this.subscription = new ResumingSubscription({ name: "invariant-checker", events: this.opts.store, after, log: this.opts.log });
    try {
      for await (const e of this.subscription) {
        for (const arqUuid of this.index.apply(e)) this.suspect(arqUuid);
        this.last = e.position;
        this.lastId = e.id;
        this.wake();
      }
    } catch (err) {
      if (!this.stopped) this.opts.log.error({ err }, "invariant checker stopped following the log");
    }
  }

  /** The checker as a follower of the log (/readyz `followers`). */
  status(): FollowerStatus {
    return subscriptionStatus("invariant-checker", this.subscription, this.live);
  }

  private suspect(arqUuid: string) {
    if (this.index.violations(arqUuid).length === 0) this.suspects.delete(arqUuid);
    else if (!this.suspects.has(arqUuid)) this.suspects.set(arqUuid, this.now());
  }

  private wake() {
    for (let i = this.positionWaiters.length - 1; i >= 0; i--) {
      const w = this.positionWaiters[i]!;
      if (this.last! >= w.at) {
        this.positionWaiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  private ctx(): CommandContext {
    const id = `invariant-checker-${this.now()}`;
    return { principal: "system:invariant-checker", isAdmin: true, correlationId: id, causationId: id, at: new Date(this.now()).toISOString() };
  }
}

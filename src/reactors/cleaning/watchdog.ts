/**
 * The cleaning watchdog, a process manager beside the binder: it follows the cleans requested on
 * the hosts' streams and closes each one no agent answered within CLEAN_TIMEOUT_S
 * (Application.abandonCleaning, AbandonDeviceCleaning): the device is FAILED with a reason that
 * says no agent answered, where it would otherwise stay CLEANING forever. It reads the log from
 * where it last got to (its position and the cleans open then are kept beside the binder's
 * snapshots, state-snapshots.ts; from the log's beginning without them); a request already open
 * at start is given the whole timeout from the start, as the binder gives binds, so a restart
 * never fails a clean the agent is still running. Closing is idempotent: a clean that ended
 * meanwhile is left as it ended.
 */
import type { Application } from "../../app/application.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import type { Logger } from "../../infra/logger.js";
import { catchUpFiltered } from "../follower/catch-up-filtered.js";
import { ResumingSubscription } from "../follower/resuming-subscription.js";
import { StateWriter, type StateSnapshots } from "../follower/state-snapshots.js";
import { subscriptionStatus, type FollowerStatus } from "../follower/status.js";

export interface CleaningWatchdogOptions {
  store: EventStore;
  app: Pick<Application, "abandonCleaning">;
  log: Logger;
  /** How long an agent has to report a clean (CLEAN_TIMEOUT_S). */
  timeoutMs: number;
  /** The clock (milliseconds); tests set it. */
  now?: () => number;
  /** How often it looks for cleans past their time; 0: never on its own (tests call sweep()). Default: a quarter of the timeout, at most 5 s. */
  tickMs?: number;
  /** Where its position and open cleans are kept across restarts; without it, the log is read from its beginning. */
  snapshots?: StateSnapshots;
  /** After each event it took into account (tests wait on it). */
  onRead?: (type: string, requestId: string) => void;
}

interface OpenClean {
  hostname: string;
  deviceUuid: string;
  requestId: string;
  requestedAtMs: number;
  correlationId: string;
  causationId: string;
}

const OPENS = "DeviceCleaningRequested";
const CLOSES = ["DeviceCleaned", "DeviceCleaningFailed"];
const FILTER = { eventTypes: [OPENS, ...CLOSES], streamPrefixes: ["host-"] };
/** The snapshot holds one open clean a line: raise it when that changes. */
const STATE_VERSION = 1;
const NAME = "cleaning-watchdog";
/** Events read a page at a time while catching up. */
const PAGE = 1000;

export class CleaningWatchdog {
  private readonly open = new Map<string, OpenClean>();
  private subscription?: ResumingSubscription;
  private loop?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private readonly now: () => number;
  private startedAtMs = 0;
  private writer?: StateWriter;
  /** Every event up to this one was read: where the next start reads on from. */
  private mark?: Pick<RecordedEvent, "id" | "position">;
  private stopped = false;

  constructor(private readonly opts: CleaningWatchdogOptions) {
    this.now = opts.now ?? Date.now;
  }

  async start(): Promise<void> {
    this.startedAtMs = this.now();
    const snapshots = this.opts.snapshots;
    const state = { lines: () => [...this.open.values()].map((c) => JSON.stringify(c)), restore: (lines: readonly string[]) => this.restore(lines) };
    const after = await snapshots?.load(NAME, STATE_VERSION, state);
    if (snapshots) {
      this.writer = new StateWriter(snapshots, NAME, STATE_VERSION, () => this.mark, state.lines);
      this.writer.start(after);
    }
    this.loop = this.follow(after).catch((err) => this.opts.log.error({ err }, "the cleaning watchdog stopped following the log: a bug; cleans no agent answers stay CLEANING until a restart"));
    const tick = this.opts.tickMs ?? Math.min(5000, Math.max(50, this.opts.timeoutMs / 4));
    if (tick > 0) {
      this.timer = setInterval(() => void this.sweep().catch((err) => this.opts.log.error({ err }, "closing cleans past CLEAN_TIMEOUT_S failed; trying again")), tick);
      this.timer.unref();
    }
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.subscription?.close();
    await this.loop;
    await this.writer?.stop();
  }

  /** Catches up page by page to the head it found (which then marks its position), then subscribes after it. */
  private async follow(after: bigint | undefined): Promise<void> {
    const store = this.opts.store;
    const each = (e: RecordedEvent) => this.read(e);
    const { start, atHead } = await catchUpFiltered(store, { after, filter: FILTER, page: PAGE, stopped: () => this.stopped, each });
    if (atHead && (this.mark === undefined || this.mark.position < atHead.position)) this.mark = atHead;
    if (this.stopped) return;
    const sub = (this.subscription = new ResumingSubscription({ name: NAME, events: store, after: start, filter: FILTER, log: this.opts.log }));
    for await (const e of sub) this.read(e);
  }

  private restore(lines: readonly string[]): void {
    for (const line of lines) {
      const c = JSON.parse(line) as OpenClean;
      this.open.set(c.requestId, c);
    }
  }

  status(): FollowerStatus {
    if (this.subscription === undefined && !this.stopped) return { ...subscriptionStatus(NAME, undefined, false), state: "catching-up", checkpoint: this.mark?.position.toString() ?? null };
    return subscriptionStatus(NAME, this.subscription, true);
  }

  /** Closes every clean open longer than the timeout; resolves with how many it closed. */
  async sweep(): Promise<number> {
    const now = this.now();
    let closed = 0;
    for (const c of [...this.open.values()]) {
      if (Math.max(c.requestedAtMs, this.startedAtMs) + this.opts.timeoutMs > now) continue;
      const seconds = this.opts.timeoutMs / 1000;
      const reason = `no agent answered within ${seconds} s (CLEAN_TIMEOUT_S): is the agent of ${c.hostname} running, with a driver that cleans this device?`;
      const ctx: CommandContext = { principal: "system:cleaning", correlationId: c.correlationId, causationId: c.causationId, at: new Date(now).toISOString() };
      const done = await this.opts.app.abandonCleaning(ctx, { hostname: c.hostname, deviceUuid: c.deviceUuid, requestId: c.requestId, reason });
      this.open.delete(c.requestId);
      if (done) {
        closed++;
        this.opts.log.warn({ hostname: c.hostname, device: c.deviceUuid, request: c.requestId }, `clean of device ${c.deviceUuid} on ${c.hostname} closed as failed: ${reason}`);
      }
    }
    return closed;
  }

  private read(e: RecordedEvent): void {
    const { hostname, deviceUuid, requestId, at } = e.data as { hostname: string; deviceUuid: string; requestId: string; at: string };
    if (e.type === OPENS) {
      const requestedAtMs = Date.parse(at);
      this.open.set(requestId, { hostname, deviceUuid, requestId, requestedAtMs: Number.isFinite(requestedAtMs) ? requestedAtMs : this.now(), correlationId: e.metadata.correlationId ?? e.id, causationId: e.id });
    } else this.open.delete(requestId);
    this.mark = e;
    this.opts.onRead?.(e.type, requestId);
  }
}

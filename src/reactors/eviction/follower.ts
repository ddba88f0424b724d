/**
 * The eviction follower, a process manager beside the binder: it follows DeviceTainted on the
 * hosts' streams and, for each NoExecute taint, asks every holder of the device to move
 * (Application.requestEvictions: an eviction notice on each holder's ARQ, with a deadline of
 * EVICTION_DEADLINE_S after the taint). It reads the log from where it last got to (its position
 * is kept beside the binder's snapshots, state-snapshots.ts; from the log's beginning without
 * them), so a taint committed while no follower ran is acted on after a restart without reading
 * the whole log again; the notices are idempotent (a holder already told, gone since, or a taint
 * removed since gives none). A lost subscription is taken up again after the last event read
 * (ResumingSubscription).
 */
import type { Application } from "../../app/application.js";
import type { EvictionNotice } from "../../app/eviction.js";
import type { DeviceTainted } from "../../domain/inventory/events.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { EventStore, Recorded, RecordedEvent } from "../../infra/eventstore/port.js";
import type { Logger } from "../../infra/logger.js";
import { catchUpFiltered } from "../follower/catch-up-filtered.js";
import { ResumingSubscription } from "../follower/resuming-subscription.js";
import { StateWriter, type StateSnapshots } from "../follower/state-snapshots.js";
import { subscriptionStatus, type FollowerStatus } from "../follower/status.js";

/** The follower keeps only its position: raise it if it ever keeps more. */
const EVICTION_STATE_VERSION = 1;
const FILTER = { eventTypes: ["DeviceTainted"], streamPrefixes: ["host-"] };
/** Taints read a page at a time while catching up. */
const PAGE = 1000;

export interface EvictionFollowerOptions {
  store: EventStore;
  app: Pick<Application, "requestEvictions">;
  log: Logger;
  /** How long holders are given to move, from the taint (EVICTION_DEADLINE_S). */
  deadlineMs: number;
  /** After each notice given (the log line and metric naming the instance, with NOVA_URL). */
  onNotice?: (notice: EvictionNotice & { hostname: string; deviceUuid: string; taintKey: string }) => void;
  /** Where its position is kept across restarts (the embedded mode's snapshot directory); without it, the log is read from its beginning. */
  snapshots?: StateSnapshots;
}

export class EvictionFollower {
  private subscription?: ResumingSubscription;
  private loop?: Promise<void>;
  private writer?: StateWriter;
  /** Every taint up to this event was acted on: where the next start reads on from. */
  private mark?: Pick<RecordedEvent, "id" | "position">;
  private stopped = false;

  constructor(private readonly opts: EvictionFollowerOptions) {}

  /**
   * Acts on the taints since its last position (the service starts meanwhile: the notices are
   * given in the background), then follows the log.
   */
  async start(): Promise<void> {
    const none = { lines: () => [], restore: () => undefined };
    const snapshots = this.opts.snapshots;
    const after = await snapshots?.load("eviction", EVICTION_STATE_VERSION, none);
    if (snapshots) {
      this.writer = new StateWriter(snapshots, "eviction", EVICTION_STATE_VERSION, () => this.mark, () => []);
      this.writer.start(after);
    }
    this.loop = this.follow(after).catch((err) => this.opts.log.error({ err }, "the eviction follower stopped following the log: a bug; NoExecute taints give no eviction notices until a restart"));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.loop;
    await this.writer?.stop();
  }

  /** Catches up page by page to the head it found (which then marks its position, taints or none), then subscribes after it. */
  private async follow(after: bigint | undefined): Promise<void> {
    const store = this.opts.store;
    const each = (e: RecordedEvent) => this.acted(e);
    const { start, atHead } = await catchUpFiltered(store, { after, filter: FILTER, page: PAGE, stopped: () => this.stopped, each });
    if (atHead && (this.mark === undefined || this.mark.position < atHead.position)) this.mark = atHead;
    if (this.stopped) return;
    const sub = (this.subscription = new ResumingSubscription({ name: "eviction", events: store, after: start, filter: FILTER, log: this.opts.log }));
    for await (const e of sub) await this.acted(e);
  }

  private async acted(e: RecordedEvent): Promise<void> {
    await this.act(e as Recorded<DeviceTainted>);
    this.mark = e;
  }

  status(): FollowerStatus {
    if (this.subscription === undefined && !this.stopped) return { ...subscriptionStatus("eviction", undefined, false), state: "catching-up", checkpoint: this.mark?.position.toString() ?? null };
    return subscriptionStatus("eviction", this.subscription, true);
  }

  private async act(e: Recorded<DeviceTainted>): Promise<void> {
    const { hostname, deviceUuid, taint } = e.data;
    if (taint.effect !== "NoExecute") return;
    const deadline = new Date(Date.parse(taint.at) + this.opts.deadlineMs).toISOString();
    const ctx: CommandContext = { principal: "system:eviction", correlationId: e.metadata.correlationId ?? e.id, causationId: e.id, at: new Date().toISOString() };
    const input = { hostname, deviceUuid, taintKey: taint.key, taintValue: taint.value, reason: taint.reason, deadline };
    for (let attempt = 1; ; attempt++) {
      try {
        const notices = await this.opts.app.requestEvictions(ctx, input);
        for (const n of notices) this.opts.onNotice?.({ ...n, hostname, deviceUuid, taintKey: taint.key });
        return;
      } catch (err) {
        if (attempt >= 5) {
          this.opts.log.error({ err, hostname, deviceUuid, taint: taint.key }, "eviction notices could not be given; they are given again at the next restart");
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }
}

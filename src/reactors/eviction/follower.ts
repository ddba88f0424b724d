/**
 * The eviction follower, a process manager beside the binder: it follows DeviceTainted on the
 * hosts' streams and, for each NoExecute taint, asks every holder of the device to move
 * (Application.requestEvictions: an eviction notice on each holder's ARQ, with a deadline of
 * EVICTION_DEADLINE_S after the taint). It reads the log from its beginning at start, so a taint
 * committed while no follower ran is acted on after a restart; the notices are idempotent (a
 * holder already told, gone since, or a taint removed since gives none). A lost subscription is
 * taken up again after the last event read (ResumingSubscription).
 */
import type { Application } from "../../app/application.js";
import type { EvictionNotice } from "../../app/eviction.js";
import type { DeviceTainted } from "../../domain/inventory/events.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { EventStore, Recorded } from "../../infra/eventstore/port.js";
import type { Logger } from "../../infra/logger.js";
import { ResumingSubscription } from "../follower/resuming-subscription.js";
import { subscriptionStatus, type FollowerStatus } from "../follower/status.js";

export interface EvictionFollowerOptions {
  store: EventStore;
  app: Pick<Application, "requestEvictions">;
  log: Logger;
  /** How long holders are given to move, from the taint (EVICTION_DEADLINE_S). */
  deadlineMs: number;
  /** After each notice given (the log line and metric naming the instance, with NOVA_URL). */
  onNotice?: (notice: EvictionNotice & { hostname: string; deviceUuid: string; taintKey: string }) => void;
}

export class EvictionFollower {
  private subscription?: ResumingSubscription;
  private loop?: Promise<void>;

  constructor(private readonly opts: EvictionFollowerOptions) {}

  /** Follows the log from its beginning (the taints before the start are acted on meanwhile, the service starts at once). */
  start(): Promise<void> {
    const filter = { eventTypes: ["DeviceTainted"], streamPrefixes: ["host-"] };
    const sub = (this.subscription = new ResumingSubscription({ name: "eviction", events: this.opts.store, filter, log: this.opts.log }));
    this.loop = (async () => {
      for await (const e of sub) await this.act(e as Recorded<DeviceTainted>);
    })().catch((err) => this.opts.log.error({ err }, "the eviction follower stopped following the log: a bug; NoExecute taints give no eviction notices until a restart"));
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.loop;
  }

  status(): FollowerStatus {
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

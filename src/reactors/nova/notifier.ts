/**
 * The Nova notifier (role `nova`): a process manager that follows the event log from its own
 * checkpoint (`nova-notifier`, kept in the log itself: it survives the embedded mode's restarts
 * and a Redis that lost its data) and tells Nova about every bind that completes or fails:
 * POST <NOVA_URL>/os-server-external-events, accelerator-request-bound, the events of one
 * instance in one request. Which events resolve a bind is the domain's rule (bind-resolutions.ts),
 * the same as GraphQL's acceleratorRequestBound; an ARQ whose start came before the checkpoint is
 * looked up by folding its stream up to the event.
 *
 * At least once: a batch counts as handled when Nova has answered for each of its events, so a
 * crash hands again what came after the last checkpoint (at most about a second's worth).
 * - Nova down (no answer, 5xx) or refusing the request (401, 403, another 4xx: a configuration
 *   problem, logged as an error): the batch waits and is tried again after a backoff. Binds never
 *   wait for it.
 * - Per event: 200 delivered; 404 the instance is gone: dropped with a log line; 422 the instance
 *   is not on a host yet: held and tried again (held-events.ts).
 * - First start (no checkpoint yet): binds resolved more than NOVA_EVENT_RETRY_S ago are history,
 *   not sent (no compute waits for them any more).
 */
import { setMaxListeners } from "node:events";
import { liveArq, arqDecider } from "../../domain/arqs/decider.js";
import { BindResolutions } from "../../domain/arqs/bind-resolutions.js";
import { novaBoundEvent } from "../../domain/arqs/bound-notification.js";
import type { ArqEvent } from "../../domain/events.js";
import { fold } from "../../domain/shared/decider.js";
import { streamPrefix } from "../../domain/shared/types.js";
import type { Config } from "../../infra/config.js";
import type { EventStore, Recorded, RecordedEvent } from "../../infra/eventstore/port.js";
import { LogFollower } from "../follower/log-follower.js";
import type { FollowerStatus } from "../follower/status.js";
import type { Logger } from "../../infra/logger.js";
import type { ReadStore } from "../../infra/readstore/port.js";
import { NovaClient } from "./client.js";
import { send, type Delivery, type Outcome } from "./deliveries.js";
import { NovaRefusedError, type NovaError } from "./errors.js";
import { HeldEvents } from "./held-events.js";

export const NOVA_NOTIFIER = "nova-notifier";
const ARQ_EVENT_TYPES = ["ArqBindStarted", "ArqBound", "ArqBindFailed", "ArqUnbound", "ArqDeleted"] satisfies Array<ArqEvent["type"]>;
/** Nova's format checker takes a server_uuid only if Python's uuid.UUID() does. */
const UUID = /^(urn:uuid:)?\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$/i;

export type NovaConfig = Pick<Config, "NOVA_URL" | "NOVA_TOKEN" | "NOVA_EVENT_RETRY_S">;

export interface NovaNotifierStatus extends FollowerStatus {
  novaUrl: string;
  /** Events Nova answered 422 for, tried again until NOVA_EVENT_RETRY_S after the first. */
  heldEvents: number;
  /** Since this process started. */
  delivered: number;
  dropped: number;
}

export interface NovaNotifierOptions {
  store: EventStore;
  /** Where the status is published (for `projections status`). */
  readStore: ReadStore;
  config: NovaConfig;
  log: Logger;
  /** Tests and benchmarks. */
  tuning?: {
    client?: NovaClient;
    backoff?: { minMs?: number; maxMs?: number };
    /** First pause before a 422 is tried again (default 1000 ms; it doubles up to 10 s). */
    heldRetryMs?: number;
    coalesceMs?: number;
    statusEveryMs?: number;
    /** Requests to Nova in flight at once (default 8). */
    concurrency?: number;
  };
}

export async function startNovaNotifier(options: NovaNotifierOptions): Promise<NovaNotifier> {
  const n = new NovaNotifier(options);
  await n.start();
  return n;
}

export class NovaNotifier {
  private readonly log: Logger;
  private readonly client: NovaClient;
  private readonly follower: LogFollower;
  private readonly resolutions = new BindResolutions();
  private readonly held: HeldEvents;
  /** Resolutions found and not answered by Nova yet (the current batch's). */
  private readonly outbox = new Map<string, Delivery>();
  private preparedUpTo = -1n;
  /** First start only: resolutions older than this (ms since the epoch) are history. */
  private historyBefore: number | undefined;
  private readonly retryForMs: number;
  private readonly concurrency: number;
  private heldTimer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private delivered = 0;
  private dropped = 0;

  constructor(private readonly options: NovaNotifierOptions) {
    const { config, tuning } = options;
    if (!config.NOVA_URL) throw new Error("NOVA_URL is not set");
    this.log = options.log.child({ component: NOVA_NOTIFIER });
    this.client = tuning?.client ?? new NovaClient({ url: config.NOVA_URL, token: config.NOVA_TOKEN });
    this.retryForMs = config.NOVA_EVENT_RETRY_S * 1000;
    this.held = new HeldEvents(this.retryForMs, tuning?.heldRetryMs ?? 1000);
    this.concurrency = tuning?.concurrency ?? 8;
    this.follower = new LogFollower({
      name: NOVA_NOTIFIER,
      events: options.store,
      checkpoints: options.readStore,
      checkpointIn: "event-log",
      // The events of one commit (the ARQs of one PATCH) in one batch, so in one request per instance.
      settle: true,
      filter: { streamPrefixes: [streamPrefix.arq], eventTypes: ARQ_EVENT_TYPES },
      handle: (batch, signal) => this.handle(batch, signal),
      snapshot: () => ({ held: this.held.snapshot() }),
      resume: (from, state) => this.resume(from, state),
      log: this.log,
      backoff: tuning?.backoff ?? { minMs: 200, maxMs: 30_000 },
      coalesceMs: tuning?.coalesceMs,
      statusEveryMs: tuning?.statusEveryMs,
    });
  }

  async start(): Promise<void> {
    setMaxListeners(0, this.stopping.signal);
    if (!this.options.config.NOVA_TOKEN) this.log.warn({ nova: this.client.url }, "NOVA_TOKEN is not set: events go to Nova without a token");
    await this.follower.start();
    const tick = Math.min(this.options.tuning?.heldRetryMs ?? 1000, 1000);
    const retryHeld = () => this.retryHeld().catch((err: Error) => this.log.error({ err: err.message }, "a round over the held events failed; the next one tries again"));
    this.heldTimer = setInterval(() => void (this.round ??= retryHeld().finally(() => (this.round = undefined))), tick);
    this.heldTimer.unref();
    this.log.info({ nova: this.client.url, retryForS: this.options.config.NOVA_EVENT_RETRY_S }, "Nova notifier started");
  }

  async stop(): Promise<void> {
    clearInterval(this.heldTimer);
    this.stopping.abort(new Error("the Nova notifier stopped"));
    await this.round?.catch(() => undefined);
    await this.follower.stop();
  }

  /** Resolves once every event in the log as of now was answered by Nova (or set aside as held). */
  caughtUp(timeoutMs?: number): Promise<void> {
    return this.follower.caughtUp(timeoutMs);
  }

  status(): NovaNotifierStatus {
    return { ...this.follower.status(), novaUrl: this.client.url, heldEvents: this.held.size, delivered: this.delivered, dropped: this.dropped };
  }

  /** (Re)start from the stored checkpoint: forget what this process had found after it. */
  private resume(from: bigint | undefined, state: unknown): void {
    this.resolutions.clear();
    this.outbox.clear();
    this.held.restore((state as { held?: unknown } | undefined)?.held);
    this.preparedUpTo = from ?? -1n;
    this.historyBefore = from === undefined ? Date.now() - this.retryForMs : undefined;
  }

  private async handle(batch: readonly RecordedEvent[], signal: AbortSignal): Promise<void> {
    await this.prepare(batch as ReadonlyArray<Recorded<ArqEvent>>);
    if (this.outbox.size === 0) return;
    let failure: NovaError | undefined;
    for (const o of await send(this.client, [...this.outbox.values()], { concurrency: this.concurrency, signal })) {
      if (o.result === "failed") failure ??= o.error;
      else {
        this.outbox.delete(o.delivery.key);
        this.settled(o, false);
      }
    }
    if (failure instanceof NovaRefusedError) this.log.error({ instance: failure.instanceUuid, status: failure.answer.status, code: failure.code, err: failure.message }, "Nova refuses the events: retrying; check NOVA_URL and NOVA_TOKEN");
    if (failure) throw failure;
  }

  /** Turns the batch's new events into deliveries, once each (a batch handed again finds them done). */
  private async prepare(batch: ReadonlyArray<Recorded<ArqEvent>>): Promise<void> {
    const fresh = batch.filter((e) => e.position > this.preparedUpTo);
    for (const e of this.resolutions.mustLearn(fresh)) {
      const before = await this.options.store.readStream(e.stream, { maxCount: e.revision });
      const arq = liveArq(fold(arqDecider, arqDecider.initialState(), before.map((b) => ({ type: b.type, data: b.data }) as ArqEvent)));
      if (arq?.state === "BIND_STARTED") this.resolutions.learnBinding(arq.uuid, arq.instanceUuid);
    }
    let history = 0;
    for (const e of fresh) {
      this.preparedUpTo = e.position;
      const r = this.resolutions.next(e);
      if (!r) continue;
      if (this.historyBefore !== undefined && e.recordedAt.getTime() < this.historyBefore) history++;
      else if (!r.instanceUuid || !UUID.test(r.instanceUuid)) {
        this.dropped++;
        this.log.warn({ arq: r.arqUuid, instance: r.instanceUuid }, "a bind resolved for an instance Nova cannot have (not a UUID): not sent");
      } else {
        const key = `${e.position}/${r.arqUuid}`;
        const event = novaBoundEvent(r, r.instanceUuid);
        if (!this.held.has(key)) this.outbox.set(key, { key, event });
      }
    }
    if (history) this.log.info({ binds: history, olderThanS: this.options.config.NOVA_EVENT_RETRY_S }, "first start: binds resolved before NOVA_EVENT_RETRY_S are history, not sent");
  }

  /** One round over the held events: drop the expired, try the due. */
  private async retryHeld(): Promise<void> {
    const now = Date.now();
    for (const h of this.held.expired(now)) {
      this.held.settle(h.key);
      this.dropped++;
      this.log.warn({ instance: h.event.server_uuid, arq: h.event.tag, status: h.event.status, since: h.since, attempts: h.attempts }, "Nova still says the instance is not on a host after NOVA_EVENT_RETRY_S: event dropped");
    }
    const due = this.held.due(now);
    if (due.length === 0 || this.stopping.signal.aborted) return;
    const outcomes = await send(this.client, due, { concurrency: this.concurrency, signal: this.stopping.signal }).catch(() => [] as Outcome[]);
    for (const o of outcomes) {
      if (o.result === "failed") {
        this.held.postpone(o.delivery.key, Date.now());
        this.log.warn({ instance: o.error.instanceUuid, err: o.error.message }, "could not try a held event again");
      } else this.settled(o, true);
    }
  }

  private settled(o: Exclude<Outcome, { result: "failed" }>, wasHeld: boolean): void {
    const { key, event } = o.delivery;
    const about = { instance: event.server_uuid, arq: event.tag, status: event.status };
    if (o.result === "no-host") {
      const h = this.held.refused(o.delivery, Date.now());
      if (!wasHeld) this.log.info({ ...about, retryForS: this.options.config.NOVA_EVENT_RETRY_S }, "Nova: the instance is not on a host yet (422, Nova bug 1855752); trying again");
      else this.log.debug({ ...about, attempts: h.attempts }, "Nova: still not on a host (422)");
      return;
    }
    this.held.settle(key);
    if (o.result === "gone") {
      this.dropped++;
      this.log.info(about, "Nova: the instance does not exist (404): event dropped");
    } else {
      this.delivered++;
      if (wasHeld) this.log.info(about, "Nova took an event it had answered 422 for");
      else this.log.debug(about, "accelerator-request-bound delivered");
    }
  }
}

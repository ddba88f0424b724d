/**
 * The Placement sync (role `placement`): a process manager that follows the event log from its
 * own checkpoint (`placement-sync`) and, for each host whose providers may have changed, folds
 * the host's stream and makes Placement match (host-sync.ts). It issues no commands and writes
 * no read model; its only state is its checkpoint and the hosts it is waiting on, recorded
 * together.
 *
 * - Placement down (no answer, 5xx): the batch fails and is handed again after a backoff, so the
 *   sync waits and then catches up; hosts finished before the failure are not done again.
 * - Placement refuses something about one host (its compute node is missing and
 *   PLACEMENT_MISSING_COMPUTE_NODE=wait, a name taken, a trait unknown), or a removed provider still
 *   has allocations: that host waits (recorded with the checkpoint, so it survives a restart) and
 *   is tried again every PLACEMENT_RETRY_S; the other hosts go on.
 *   Each waiting host is logged once (again when the reason changes, or after an hour of the same
 *   refusals, with how many went unlogged), not once per event or retry: waiting-log.ts.
 * - A lost checkpoint means the log is followed again from the beginning: every host is made to
 *   match again, which writes nothing where Placement already matches.
 */
import { setMaxListeners } from "node:events";
import { desiredProviders, PROVIDER_EVENT_TYPES } from "../../domain/inventory/resource-providers.js";
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import { LogFollower } from "../follower/log-follower.js";
import type { FollowerStatus } from "../follower/status.js";
import type { Logger } from "../../infra/logger.js";
import type { ReadStore, Write } from "../../infra/readstore/port.js";
import { keyPrefix } from "../../infra/readstore/keys-and-cursors.js";
import type { Config } from "../../infra/config.js";
import { PlacementClient } from "./client.js";
import { ComputeNodeNotFoundError, isTransient, PlacementError, PlacementRefusedError } from "./errors.js";
import type { HostSyncResult } from "./changes.js";
import { HostSyncer } from "./host-sync.js";
import { HOST_STREAM_PREFIX, hostOfStream, HostStates } from "./host-states.js";
import { WaitingLog } from "./waiting-log.js";
import { stream } from "../../domain/shared/types.js";

export const PLACEMENT_SYNC = "placement-sync";
const WAITING_KEY = `${keyPrefix(PLACEMENT_SYNC)}waiting`;

export type PlacementConfig = Pick<
  Config,
  "PLACEMENT_URL" | "PLACEMENT_TOKEN" | "PLACEMENT_MISSING_COMPUTE_NODE" | "PLACEMENT_RETRY_S" | "PLACEMENT_CONCURRENCY"
>;

export interface WaitingHost {
  host: string;
  reason: string;
  since: string;
}

export interface PlacementSyncStatus extends FollowerStatus {
  placementUrl: string;
  /** Hosts Placement cannot match yet (each tried again every PLACEMENT_RETRY_S). */
  waitingHosts: number;
  /** The first 20 of them. */
  waiting: WaitingHost[];
}

/** Whether Placement shows a host as the log has it (its providers, inventories and traits). */
export interface PlacementHostSync {
  synced: boolean;
  /** Why not, in words; null when synced. */
  reason: string | null;
}

export interface PlacementSync {
  status(): PlacementSyncStatus;
  /** Every event of the host's stream handled, and the host not waiting: Placement has its traits. */
  hostSynced(hostname: string): Promise<PlacementHostSync>;
  /** Resolves once everything in the log as of now is handled. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** Tries the waiting hosts now (instead of at the next PLACEMENT_RETRY_S). */
  retryWaiting(): Promise<void>;
  stop(): Promise<void>;
}

export interface PlacementSyncOptions {
  store: EventStore;
  readStore: ReadStore;
  config: PlacementConfig;
  log: Logger;
  /** Tests and benchmarks: a client with hooks, a shorter backoff. */
  tuning?: {
    client?: PlacementClient;
    backoff?: { minMs?: number; maxMs?: number };
    idleCommitMs?: number;
    statusEveryMs?: number;
    /** How long a host refused again for the same reason stays unlogged (default an hour). */
    waitingLogQuietMs?: number;
  };
}

export function placementClientFor(config: PlacementConfig): PlacementClient {
  if (!config.PLACEMENT_URL) throw new Error("PLACEMENT_URL is not set");
  return new PlacementClient({ url: config.PLACEMENT_URL, token: config.PLACEMENT_TOKEN, concurrency: config.PLACEMENT_CONCURRENCY });
}

export async function startPlacementSync(options: PlacementSyncOptions): Promise<PlacementSync> {
  const sync = new Sync(options);
  await sync.start();
  return sync;
}

class Sync implements PlacementSync {
  private readonly log: Logger;
  private readonly client: PlacementClient;
  private readonly syncer: HostSyncer;
  private readonly states: HostStates;
  private readonly follower: LogFollower;
  /** Host -> stream revision Placement was last made to match (this process). */
  private readonly synced = new Map<string, number>();
  private readonly waiting = new Map<string, Omit<WaitingHost, "host">>();
  /** Which waiting hosts were told about, so a host refused again and again logs one line. */
  private readonly waitingLog: WaitingLog;
  private readonly locks = new Map<string, Promise<void>>();
  private retryTimer: NodeJS.Timeout | undefined;
  /** The retry round running, if any. */
  private round: Promise<void> | undefined;
  private readonly stopping = new AbortController();

  constructor(private readonly options: PlacementSyncOptions) {
    this.log = options.log.child({ component: PLACEMENT_SYNC });
    this.client = options.tuning?.client ?? placementClientFor(options.config);
    this.syncer = new HostSyncer({ client: this.client, missingComputeNode: options.config.PLACEMENT_MISSING_COMPUTE_NODE });
    this.states = new HostStates(options.store);
    this.waitingLog = new WaitingLog(options.tuning?.waitingLogQuietMs);
    this.follower = new LogFollower({
      name: PLACEMENT_SYNC,
      events: options.store,
      checkpoints: options.readStore,
      filter: { streamPrefixes: [HOST_STREAM_PREFIX], eventTypes: PROVIDER_EVENT_TYPES },
      handle: (batch, signal) => this.handle(batch, signal),
      log: this.log,
      maxBatch: 1000,
      backoff: options.tuning?.backoff ?? { minMs: 500, maxMs: 30_000 },
      idleCommitMs: options.tuning?.idleCommitMs,
      statusEveryMs: options.tuning?.statusEveryMs,
    });
  }

  async start(): Promise<void> {
    setMaxListeners(0, this.stopping.signal);
    const [doc] = await this.options.readStore.getDocs([WAITING_KEY]);
    for (const [host, w] of Object.entries(doc ?? {})) this.waiting.set(host, w as Omit<WaitingHost, "host">);
    await this.follower.start();
    const everyMs = this.options.config.PLACEMENT_RETRY_S * 1000;
    this.retryTimer = setInterval(() => void (this.round ?? this.retryWaiting()).catch((err: Error) => this.log.error({ err: err.message }, "a round over the waiting hosts failed; the next one tries again")), everyMs);
    this.retryTimer.unref();
    this.log.info({ placement: this.client.url, waitingHosts: this.waiting.size }, "Placement sync started");
  }

  async stop(): Promise<void> {
    clearInterval(this.retryTimer);
    this.stopping.abort(new Error("the Placement sync stopped"));
    await this.follower.stop();
    await this.round;
  }

  caughtUp(timeoutMs?: number): Promise<void> {
    return this.follower.caughtUp(timeoutMs);
  }

  async hostSynced(host: string): Promise<PlacementHostSync> {
    const waiting = this.waiting.get(host);
    if (waiting) return { synced: false, reason: `Placement cannot match host ${host} yet (tried again every PLACEMENT_RETRY_S): ${waiting.reason}` };
    const [last] = await this.options.store.readStream(stream.host(host), { direction: "backwards", maxCount: 1 });
    if (!last || this.follower.handled(last.position)) return { synced: true, reason: null };
    const { state, lagEvents } = this.follower.status();
    return { synced: false, reason: `the Placement sync has not pushed host ${host}'s latest inventory yet (${state}, ${lagEvents} events behind)` };
  }

  status(): PlacementSyncStatus {
    return {
      ...this.follower.status(),
      placementUrl: this.client.url,
      waitingHosts: this.waiting.size,
      waiting: [...this.waiting].slice(0, 20).map(([host, w]) => ({ host, ...w })),
    };
  }

  /** A round over the waiting hosts; called while one runs, it runs another after it (the timer skips instead). */
  retryWaiting(): Promise<void> {
    const after = this.round ?? Promise.resolve();
    const round = after.then(() => this.retryRound());
    this.round = round;
    void round.finally(() => this.round === round && (this.round = undefined)).catch(() => undefined);
    return round;
  }

  private async retryRound(): Promise<void> {
    for (const host of [...this.waiting.keys()]) {
      if (this.stopping.signal.aborted) return;
      await this.syncOne(host, this.stopping.signal).catch((err: Error) => {
        if (this.stopping.signal.aborted) return;
        const news = this.waitingLog.refused(host, `unavailable: ${err.message}`);
        if (news) this.log.warn({ host, err: err.message, ...(news.lastLoggedAt ? { refusalsNotLogged: news.unlogged, lastLoggedAt: news.lastLoggedAt } : {}) }, "Placement is still unavailable for a waiting host");
      });
    }
  }

  /** Every host the batch touched, each made to match once, in parallel (the client caps requests in flight). */
  private async handle(events: readonly RecordedEvent[], signal: AbortSignal): Promise<Write[]> {
    const latest = new Map<string, number>();
    for (const e of events) {
      const host = hostOfStream(e.stream);
      if (host !== null) latest.set(host, Math.max(latest.get(host) ?? -1, e.revision));
    }
    // Placement down for one host is down for all: the first such failure stops the batch's other
    // hosts (the batch comes again after a backoff; the hosts finished by then are not redone).
    const batch = new AbortController();
    setMaxListeners(0, batch.signal);
    const stop = () => batch.abort(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    const failures: unknown[] = [];
    try {
      await Promise.all(
        [...latest].map(async ([host, revision]) => {
          // Done already by an earlier attempt at this batch (or by a retry round).
          if ((this.synced.get(host) ?? -1) >= revision || batch.signal.aborted) return;
          await this.syncOne(host, batch.signal).catch((err: unknown) => {
            failures.push(err);
            if (isTransient(err)) batch.abort(err);
          });
        }),
      );
    } finally {
      signal.removeEventListener("abort", stop);
    }
    if (failures.length) throw failures.find(isTransient) ?? failures[0];
    return this.waitingWrites();
  }

  /** Makes Placement match one host; a refusal sets the host aside as waiting, anything else is thrown (the batch waits). */
  private syncOne(host: string, signal: AbortSignal): Promise<void> {
    const previous = this.locks.get(host) ?? Promise.resolve();
    const run = previous.then(async () => {
      const { state, revision } = await this.states.load(host);
      const desired = desiredProviders(state);
      let result: HostSyncResult;
      try {
        result = await this.syncer.syncHost(host, desired, signal);
      } catch (err) {
        this.syncer.forget(host, desired);
        if (signal.aborted || !(err instanceof PlacementRefusedError || err instanceof ComputeNodeNotFoundError)) throw err;
        this.setWaiting(host, err.message);
        this.logRefusal(host, err);
        this.synced.set(host, revision);
        return;
      }
      this.waitingLog.forget(host);
      for (const c of result.changes) this.log.info({ host, action: c.action, provider: c.name, uuid: c.uuid, detail: c.detail }, `placement: ${c.action}`);
      this.synced.set(host, revision);
      if (result.waiting.length) this.setWaiting(host, result.waiting.join("; "));
      else if (this.waiting.delete(host)) this.log.info({ host }, "Placement matches a host that was waiting");
    });
    const settled = run.catch(() => undefined);
    this.locks.set(host, settled);
    void settled.then(() => this.locks.get(host) === settled && this.locks.delete(host));
    return run;
  }

  /** Once per host and reason, then at most once per quiet interval (waiting-log.ts). */
  private logRefusal(host: string, err: PlacementRefusedError | ComputeNodeNotFoundError): void {
    const news = this.waitingLog.refused(host, err.message);
    if (!news) return;
    const provider = err instanceof PlacementError ? err.provider : undefined;
    const answer = err instanceof PlacementError ? err.answer : undefined;
    const quiet = news.lastLoggedAt ? { refusalsNotLogged: news.unlogged, lastLoggedAt: news.lastLoggedAt } : {};
    this.log.warn(
      { host, provider: provider?.name, uuid: provider?.uuid, status: answer?.status, code: answer?.code, err: err.message, ...quiet },
      "Placement cannot match this host yet; it waits and is tried again every PLACEMENT_RETRY_S",
    );
  }

  private setWaiting(host: string, reason: string): void {
    this.waiting.set(host, { reason, since: this.waiting.get(host)?.since ?? new Date().toISOString() });
  }

  /** The whole waiting set, recorded with the checkpoint (small: usually empty). */
  private waitingWrites(): Write[] {
    const writes: Write[] = [{ op: "del", key: WAITING_KEY }];
    if (this.waiting.size) writes.push({ op: "put", key: WAITING_KEY, fields: Object.fromEntries(this.waiting) });
    return writes;
  }
}

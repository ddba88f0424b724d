/**
 * The composition root: configuration -> adapters (adapters.ts) -> application -> roles -> servers.
 * ROLES picks what this process runs: the api (any number of replicas), the projector, the
 * binder, the Placement sync and the Nova notifier (one active at a time each).
 */
import { BoundNotifier } from "../../projections/arqs/bound-notifier.js";
import { EvictionNotifier } from "../../projections/arqs/eviction-notifier.js";
import { projections } from "../../projections/index.js";
import { fleetFeed } from "../../projections/resource-providers/queries.js";
import { liveArqsOf } from "../../projections/arqs/queries.js";
import { archiveDir, arqQuota, bitstreamOptions, openEventStore, openReadSide, readModelsOf, rebuildLog, snapshotDir } from "./adapters.js";
import { ReportAdmission } from "../api/report-admission.js";
import { StateSnapshots } from "../reactors/follower/state-snapshots.js";
import { adminTokenCommand, loadTokenRegistry, type TokenRegistry } from "../api/auth/tokens.js";
import { startHttpServer } from "../api/http-server.js";
import { weigherRoute } from "../api/weigher-route.js";
import { explainRoute } from "../api/explain-route.js";
import { bitstreamRoutes } from "../api/bitstream-routes.js";
import { BindNotificationRouter } from "../api/notification-router.js";
import { EvictionNotificationRouter } from "../api/eviction-router.js";
import { ProgrammingFeed } from "../api/programming-feed.js";
import { readiness } from "../api/readiness.js";
import { exemptRolesOf, rateLimitFor, type RateLimit } from "../api/rate-limit.js";
import { SocketQuota } from "../api/socket-quota.js";
import { Application } from "../app/application.js";
import { Binder, type BinderOptions } from "../reactors/binder/binder.js";
import type { Config } from "../infra/config.js";
import type { EventStore } from "../infra/eventstore/port.js";
import { InvariantChecker } from "../reactors/invariants/checker.js";
import { EvictionFollower } from "../reactors/eviction/follower.js";
import { CleaningWatchdog } from "../reactors/cleaning/watchdog.js";
import { startFollowers, type Followers } from "../reactors/start.js";
import type { Logger } from "../infra/logger.js";
import { startObservability } from "../observability/index.js";
import { scrapePacing, type Metrics } from "../observability/metrics.js";
import type { NovaNotifierOptions } from "../reactors/nova/notifier.js";
import { Projector } from "../reactors/projector/projector.js";
import { Archive } from "../audit/retention/archive.js";
import { ArchiveReadingStore } from "../audit/retention/archived-log.js";
import { RetentionScheduler } from "../audit/retention/scheduler.js";
import { readYourWrites, untilReached } from "../reactors/projector/read-your-writes.js";
import type { ReadStore } from "../infra/readstore/port.js";
import type { PubSub } from "../infra/pubsub/port.js";

export interface ServiceOverrides {
  tokens?: TokenRegistry;
  store?: EventStore;
  /** Tests wrap the read store (e.g. to count round trips). */
  wrapReadStore?: (store: ReadStore) => ReadStore;
  /** Tests wrap the read store the projector writes (e.g. to hold its writes). */
  wrapProjectorStore?: (store: ReadStore) => ReadStore;
  binder?: Partial<Pick<BinderOptions, "beforeAllocate" | "concurrency">>;
  /** false: binds only start in the mutation and the binder allocates (tests that hold the binder). */
  bindInline?: boolean;
  /** Tests: a shorter backoff for the Nova notifier. */
  nova?: NovaNotifierOptions["tuning"];
  /** Wraps the event store this process opens (the API workers' primary: a signal after each commit). */
  decorateStore?: (store: EventStore) => EventStore;
  /** The pub/sub every process hears (agent report times), when it is not the read side's (the API workers). */
  sharedPubSub?: PubSub;
  /** Read-your-writes beyond this process (the API workers: every worker's models), given this process's wait. */
  shareProgress?: (reached: (position: bigint) => Promise<void>) => (position: bigint) => Promise<void>;
  /** The request rate limit, when it is not this process's own (the API workers count in the primary). */
  rateLimit?: (config: Config) => Promise<RateLimit>;
  /** Tests: every GraphQL request over HTTP through Apollo's pipeline, to compare with the direct one. */
  apolloOnly?: boolean;
}

export interface Service {
  url: string | undefined;
  store: EventStore;
  readStore: ReadStore;
  app: Application;
  projector: Projector | undefined;
  binder: Binder | undefined;
  /** The Placement sync and the Nova notifier, when their roles run here. */
  followers: Followers;
  /** Routes accelerator-request-bound to this process's GraphQL subscriptions. */
  notifications: BindNotificationRouter;
  close(): Promise<void>;
}

const CATCH_UP_TIMEOUT_MS = 5_000;

export async function startService(config: Config, log: Logger, overrides: ServiceOverrides = {}): Promise<Service> {
  const opened: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of opened.splice(0).reverse()) await c().catch((err) => log.warn({ err }, "closing failed"));
  };
  try {
    if (config.REST_AUTH === "noauth") log.warn({ host: config.HOST }, "REST_AUTH=noauth: every REST request is treated as an admin's, without a token; for development on loopback only");
    const tokens = overrides.tokens ?? loadTokenRegistry(config, log);
    const obs = await startObservability(config, log);
    opened.push(() => obs.close());
    const store = obs.store(overrides.store ?? (overrides.decorateStore ?? ((s: EventStore) => s))(await openEventStore(config)));
    opened.push(() => store.close());
    // The audit index goes on disk beside the embedded log this process opened and projects (not a store a test passed in).
    const ownsIndex = config.roles.has("projector") && config.eventLog === "lmdb" && overrides.store === undefined;
    const side = await openReadSide(config, { auditIndexOf: ownsIndex ? store : undefined, log });
    opened.push(() => side.readStore.close(), () => side.pubsub.close());
    // Closed after the projector stopped (closers run in reverse): the last snapshot holds what it applied.
    if (side.snapshots) opened.push(() => side.snapshots!.close());
    // The API reads through the guarded view: a model that is lost or being rebuilt is UNAVAILABLE, never empty.
    const readStore = overrides.wrapReadStore?.(side.readStore.guarded()) ?? side.readStore.guarded();

    let projector: Projector | undefined;
    if (config.roles.has("projector")) {
      const notifierLog = log.child({ component: "notifications" });
      const hooks = [new BoundNotifier(side.pubsub, side.readStore, notifierLog), new EvictionNotifier(side.pubsub, notifierLog), ...obs.projectorHooks];
      const written = overrides.wrapProjectorStore?.(side.readStore) ?? side.readStore;
      // A rebuild replays the hosts' archived periods with the live log (docs/operations.md, "Retention").
      projector = new Projector({ events: store, replayLog: rebuildLog(store, config), store: written, projections, hooks, log: log.child({ component: "projector" }) });
      opened.push(() => projector!.stop());
      await projector.start();
      side.snapshots?.start();
      log.info({ eventLog: store.kind, readModels: readModelsOf(side.readStore) }, "read models caught up with the event log");
    }
    // The log with its archive, for audit; retention runs beside the projector (docs/audit.md, "Retention").
    const archive = store.archiving ? new Archive(archiveDir(config), store.archiving) : undefined;
    const auditStore = archive ? new ArchiveReadingStore(store, archive) : store;
    if (archive && projector && config.RETENTION_DAYS > 0) {
      const retention = new RetentionScheduler({ store, archive, days: config.RETENTION_DAYS, intervalMs: config.RETENTION_INTERVAL_S * 1000, index: projector, metrics: obs.metrics, log: log.child({ component: "retention" }) });
      retention.start();
      opened.push(() => retention.stop());
    }
    const models = { events: store, store: readStore, projector, names: projections.map((p) => p.name), timeoutMs: CATCH_UP_TIMEOUT_MS };
    // A project's ARQs made before its quota stream are counted once, from the arqs read model, on the stream's first use.
    const quota = { ...arqQuota(config), existing: (projectId: string) => liveArqsOf(readStore, projectId) };
    const liveness = { intervalS: config.AGENT_REPORT_INTERVAL_S, staleAfter: config.AGENT_STALE_AFTER_PERIODS, goneAfter: config.AGENT_GONE_AFTER_PERIODS };
    const app = obs.app(new Application({ store, quota, maxBindings: config.MAX_BINDINGS_PER_MUTATION, bitstreams: await bitstreamOptions(config), liveness, healthRules: config.healthRules, keepIdlePartitions: config.PARTITION_KEEP_IDLE === "true", hostBooks: { maxEvents: config.HOST_PERIOD_EVENTS, maxDays: config.HOST_PERIOD_DAYS } }));
    // Every replica hears every agent's reports: liveness is the same whichever replica is asked.
    await app.reportTimes.share(overrides.sharedPubSub ?? side.pubsub);
    opened.push(() => app.reportTimes.close());
    // The binder's and invariant checker's folds are kept beside the read models' snapshots, by the process that holds them.
    const snapshots = side.snapshots?.owns ? new StateSnapshots({ dir: snapshotDir(config), events: store, log: log.child({ component: "snapshots" }), intervalMs: config.SNAPSHOT_INTERVAL_S * 1000 }) : undefined;
    let binder: Binder | undefined;
    if (config.roles.has("binder")) {
      const onBindResolved = obs.metrics?.bindResolved.bind(obs.metrics);
      binder = new Binder({ store, app, log: log.child({ component: "binder" }), bindTimeoutMs: config.BIND_TIMEOUT_S * 1000, onBindResolved, snapshots, ...overrides.binder });
      opened.push(() => binder!.stop());
      await binder.start();
    }
    // Beside the binder: repairs what a decision spanning streams left half done (a crash, a lost connection, a lost race).
    const checker = config.roles.has("binder") ? new InvariantChecker({ store, app, log: log.child({ component: "invariant-checker" }), graceMs: config.BIND_TIMEOUT_S * 1000, snapshots, onRepair: (r) => obs.metrics?.invariantRepair(r.violation, r.action) }) : undefined;
    if (checker) {
      opened.push(() => checker.stop());
      await checker.start();
    }
    // Beside the binder: asks the holders of a device with a NoExecute taint to move.
    const eviction = config.roles.has("binder") ? evictionFollower(store, app, log, config, obs.metrics, snapshots) : undefined;
    if (eviction) {
      opened.push(() => eviction.stop());
      await eviction.start();
    }
    const watchdog = config.roles.has("binder") ? new CleaningWatchdog({ store, app, log: log.child({ component: "cleaning" }), timeoutMs: config.CLEAN_TIMEOUT_S * 1000, snapshots }) : undefined;
    if (watchdog) {
      opened.push(() => watchdog.stop());
      await watchdog.start();
    }
    const followers = await startFollowers({ store, readStore: side.readStore, config, log, nova: overrides.nova });
    opened.push(() => followers.stop());
    const notifications = new BindNotificationRouter(side.pubsub, obs.tracing);
    const evictions = new EvictionNotificationRouter(side.pubsub);
    const programming = new ProgrammingFeed(store, log.child({ component: "programming-feed" }));
    opened.push(() => notifications.close(), () => evictions.close(), () => programming.close());
    const reportAdmission = new ReportAdmission({ maxInFlight: config.REPORT_MAX_IN_FLIGHT, maxQueued: config.REPORT_MAX_QUEUED, retryAfterS: config.REPORT_RETRY_AFTER_S });
    const fleet = fleetFeed(readStore, scrapePacing);
    // Read the fleet once now, a few hosts at a time, so that the first scrape does not wait for
    // every host (at 10,000 hosts on disk that is longer than Prometheus's scrape timeout); a model
    // not yet readable is read at the first scrape instead.
    if (obs.metrics) void fleet.current().catch(() => undefined);
    obs.metrics?.watch({
      projections: () => projector?.status() ?? [],
      reportAdmission: () => reportAdmission.load(),
      openSubscriptions: () => notifications.listening,
      bindsInFlight: () => binder?.bindsInFlight ?? 0,
      fleet: async () => (await fleet.current()).hosts(),
      agent: (hostname) => {
        const l = app.reportTimes.liveness(hostname);
        return { live: l.state === "LIVE", silentForS: l.silentForS };
      },
    });

    let url: string | undefined;
    if (config.roles.has("api")) {
      const catchUp = readYourWrites({ ...models, log, reached: overrides.shareProgress?.(untilReached(models)), observe: obs.metrics && ((s) => obs.metrics!.readYourWritesWait(s)) });
      const rateLimit = await (overrides.rateLimit ?? rateLimitFor)(config);
      opened.push(() => rateLimit.close());
      const services = { app, readStore, store, auditStore, notifications, evictions, programming, catchUp, limits: { maxBindings: config.MAX_BINDINGS_PER_MUTATION }, bindInline: overrides.bindInline ?? true, idempotencyTtlMs: config.IDEMPOTENCY_TTL_S * 1000, requestTimeoutMs: config.REQUEST_TIMEOUT_S * 1000, metrics: obs.metrics, log, placement: followers.placement, reportAdmission };
      const ready = readiness({ store, readStore, names: models.names, projections: () => projector?.status() ?? [], followers: () => [...followers.status(), ...(binder ? [binder.status()] : []), ...(checker ? [checker.status()] : []), ...(eviction ? [eviction.status()] : []), ...(watchdog ? [watchdog.status()] : []), programming.status()], boundSubscriptions: () => notifications.listening });
      const routes = [bitstreamRoutes({ app, tokens, catchUp, log, rateLimit }), weigherRoute({ readStore, tokens, auth: config.REST_AUTH, log, rateLimit }), explainRoute({ readStore, tokens, auth: config.REST_AUTH, log, rateLimit, stale: (h) => app.agentUnavailable(h) !== null })];
      const socketQuota = new SocketQuota({ connections: config.WS_MAX_CONNECTIONS_PER_TOKEN, subscriptions: config.WS_MAX_SUBSCRIPTIONS_PER_TOKEN, exemptRoles: exemptRolesOf(config) });
      const observed = { metrics: obs.metrics, metricsElsewhere: config.METRICS_PORT !== undefined, tracing: obs.tracing };
      // Only an embedded service tells anyone where its token file is: a production one's is the operator's business.
      const consoleConfig = config.mode === "embedded" ? { adminTokenCommand: adminTokenCommand(config) } : {};
      const server = await startHttpServer({ services, tokens, log, maxBodyBytes: config.MAX_BODY_BYTES, ready, restAuth: config.REST_AUTH, rateLimit, socketQuota, routes, consoleConfig, apolloOnly: overrides.apolloOnly, ...observed }, config.PORT, config.HOST);
      opened.push(() => server.close());
      url = server.url;
      log.info({ url, mode: config.mode, eventLog: store.kind, readModels: readModelsOf(side.readStore), nodeEnv: process.env.NODE_ENV }, "cyborg-es is serving");
    }
    // Started now, not before: it takes a share of the main thread.
    side.snapshots?.settleLoaded();
    return { url, store, readStore, app, projector, binder, followers, notifications, close };
  } catch (err) {
    // A failed start leaves nothing open (connections would keep the process alive).
    await close();
    throw err;
  }
}

/** The eviction follower; with NOVA_URL, each notice is also a log line naming the instance (Nova has no event for it). */
function evictionFollower(store: EventStore, app: Application, log: Logger, config: Config, metrics: Metrics | undefined, snapshots: StateSnapshots | undefined): EvictionFollower {
  const elog = log.child({ component: "eviction" });
  return new EvictionFollower({
    store,
    snapshots,
    app,
    log: elog,
    deadlineMs: config.EVICTION_DEADLINE_S * 1000,
    onNotice: (n) => {
      metrics?.evictionNotice();
      if (config.NOVA_URL) elog.warn({ instance: n.instanceUuid, arq: n.arqUuid, hostname: n.hostname, device: n.deviceUuid, taint: n.taintKey, deadline: n.deadline }, `instance ${n.instanceUuid} is asked to move off device ${n.deviceUuid} on ${n.hostname} by ${n.deadline}`);
    },
  });
}

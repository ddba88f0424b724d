/**
 * The composition root: configuration -> adapters -> application -> servers. The only place that
 * picks adapters: EVENTSTORE_URL selects EventStoreDB over the embedded LMDB log, REDIS_URL selects
 * Redis over in-memory read models and in-process pub/sub; ROLES picks what this process runs.
 */
import { join } from "node:path";
import { allProjections } from "../projections/index.js";
import { ensureEmbeddedTokenFile, TokenRegistry } from "./api/auth/tokens.js";
import type { ApiServices } from "./api/graphql/context.js";
import { startHttpServer, type RunningServer } from "./api/http-server.js";
import { BindNotificationRouter } from "./api/notification-router.js";
import { Application } from "./app/application.js";
import { Binder, type BinderOptions } from "./binder/binder.js";
import type { Config } from "./config.js";
import type { EventStore } from "./eventstore/port.js";
import type { Logger } from "./logger.js";
import type { PubSub } from "./pubsub/port.js";
import { ReadModels } from "./readstore/queries.js";
import type { ReadStore } from "./readstore/port.js";
import { ProjectionRunner } from "./readstore/runner.js";

export interface ServiceOverrides {
  tokens?: TokenRegistry;
  store?: EventStore;
  /** Tests wrap the read store (e.g. to count round trips). */
  wrapReadStore?: (store: ReadStore) => ReadStore;
  binder?: Partial<Pick<BinderOptions, "beforeAllocate" | "concurrency">>;
  /** false: binds only start in the mutation and the binder allocates (tests that hold the binder). */
  bindInline?: boolean;
}

export interface Service {
  url: string | undefined;
  store: EventStore;
  readStore: ReadStore;
  read: ReadModels;
  app: Application;
  runner: ProjectionRunner | undefined;
  binder: Binder | undefined;
  /** Routes accelerator-request-bound to this process's GraphQL subscriptions. */
  notifications: BindNotificationRouter;
  close(): Promise<void>;
}

const CATCH_UP_TIMEOUT_MS = 5_000;

export async function openEventStore(config: Config): Promise<EventStore> {
  if (config.eventLog === "esdb") {
    const { EsdbEventStore } = await import("./eventstore/esdb.js");
    return EsdbEventStore.connect(config.EVENTSTORE_URL!);
  }
  const { LmdbEventStore } = await import("./eventstore/lmdb.js");
  return LmdbEventStore.open(join(config.DATA_DIR, "events"));
}

export async function openReadSide(config: Config): Promise<{ readStore: ReadStore; pubsub: PubSub }> {
  if (config.readModels === "redis") {
    const [{ RedisReadStore }, { RedisPubSub }] = await Promise.all([import("./readstore/redis.js"), import("./pubsub/redis.js")]);
    return { readStore: new RedisReadStore(config.REDIS_URL!), pubsub: new RedisPubSub(config.REDIS_URL!) };
  }
  const [{ MemoryReadStore }, { InProcessPubSub }] = await Promise.all([import("./readstore/memory.js"), import("./pubsub/in-process.js")]);
  return { readStore: new MemoryReadStore(), pubsub: new InProcessPubSub() };
}

function loadTokens(config: Config, log: Logger): TokenRegistry {
  if (config.AUTH_TOKENS_FILE) return TokenRegistry.fromFile(config.AUTH_TOKENS_FILE);
  if (config.mode === "production") {
    throw new Error("AUTH_TOKENS_FILE is required outside the embedded mode (see deploy/tokens.example.json)");
  }
  const { path, created } = ensureEmbeddedTokenFile(config.DATA_DIR);
  log.info({ tokensFile: path, created }, created ? "created a token file with an admin and a service token" : "using the token file");
  if (created) console.error(`cyborg-es: tokens for the admin and the compute service are in ${path}`);
  return TokenRegistry.fromFile(path);
}

export async function startService(config: Config, log: Logger, overrides: ServiceOverrides = {}): Promise<Service> {
  const tokens = overrides.tokens ?? loadTokens(config, log);
  const store = overrides.store ?? (await openEventStore(config));
  const side = await openReadSide(config);
  const readStore = overrides.wrapReadStore ? overrides.wrapReadStore(side.readStore) : side.readStore;
  const pubsub = side.pubsub;
  const opened: Array<() => Promise<void>> = [() => store.close(), () => readStore.close(), () => pubsub.close()];
  try {
    return await compose(config, log, tokens, store, readStore, pubsub, opened, overrides);
  } catch (err) {
    // A failed start leaves nothing open (connections would keep the process alive).
    for (const close of opened.reverse()) await close().catch(() => undefined);
    throw err;
  }
}

async function compose(
  config: Config,
  log: Logger,
  tokens: TokenRegistry,
  store: EventStore,
  readStore: ReadStore,
  pubsub: PubSub,
  opened: Array<() => Promise<void>>,
  overrides: Pick<ServiceOverrides, "binder" | "bindInline">,
): Promise<Service> {
  const binderOverrides = overrides.binder ?? {};
  const read = new ReadModels(readStore);
  const app = new Application({ store });
  const projections = allProjections;

  let runner: ProjectionRunner | undefined;
  if (config.roles.has("projector")) {
    runner = new ProjectionRunner({ events: store, store: readStore, projections, pubsub, log: log.child({ component: "projections" }) });
    const t0 = Date.now();
    opened.push(() => runner!.stop());
    await runner.start();
    log.info({ ms: Date.now() - t0, eventLog: store.kind, readModels: readStore.kind }, "read models caught up with the event log");
  }

  let binder: Binder | undefined;
  if (config.roles.has("binder")) {
    binder = new Binder({ store, app, log: log.child({ component: "binder" }), bindTimeoutMs: config.BIND_TIMEOUT_S * 1000, ...binderOverrides });
    opened.push(() => binder!.stop());
    await binder.start();
  }

  /**
   * Read-your-writes: wait until the read models reflect the log up to its head as of now. The
   * mutation has committed either way, so a projection that lags past the timeout is logged, not
   * turned into an error for a write that succeeded.
   */
  async function catchUp(): Promise<void> {
    const head = await store.headPosition();
    if (head === undefined) return;
    if (runner) {
      return runner.waitFor(head, { timeoutMs: CATCH_UP_TIMEOUT_MS }).catch((err: Error) => log.warn({ err: err.message }, "read models lag behind a mutation"));
    }
    const deadline = Date.now() + CATCH_UP_TIMEOUT_MS;
    for (;;) {
      const cps = await readStore.getCheckpoints(projections.map((p) => p.name));
      if (cps.every((c) => c !== undefined && c >= head)) return;
      if (Date.now() > deadline) return log.warn({ head: head.toString() }, "read models lag behind a mutation");
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  const notifications = new BindNotificationRouter(pubsub);
  opened.push(() => notifications.close());

  let server: RunningServer | undefined;
  if (config.roles.has("api")) {
    const services: ApiServices = {
      app,
      read,
      store,
      notifications,
      catchUp,
      limits: { maxBindings: config.MAX_BINDINGS_PER_MUTATION },
      bindInline: overrides.bindInline ?? true,
    };
    server = await startHttpServer(
      {
        services,
        tokens,
        log,
        maxBodyBytes: config.MAX_BODY_BYTES,
        ready: async () => {
          const head = await store.headPosition();
          const status = runner?.status() ?? [];
          const ok = status.every((s) => s.state === "live");
          return {
            ok,
            detail: { eventLog: store.kind, head: head?.toString() ?? null, projections: status, boundSubscriptions: notifications.listening },
          };
        },
      },
      config.PORT,
      config.HOST,
    );
    log.info({ url: server.url, mode: config.mode, eventLog: store.kind, readModels: readStore.kind }, "cyborg-es is serving");
  }

  return {
    url: server?.url,
    store,
    readStore,
    read,
    app,
    runner,
    binder,
    notifications,
    async close() {
      await server?.close();
      await notifications.close();
      await binder?.stop();
      await runner?.stop();
      await pubsub.close();
      await readStore.close();
      await store.close();
    },
  };
}

/**
 * API_WORKERS > 1 (embedded mode): one primary process and N API workers on node:cluster, which
 * shares the listening socket among the workers (docs/architecture.md, "API workers").
 *
 * The primary is the log's only writer and its one reactor leader: it runs everything `serve` runs
 * but the API (the projector with the audit index on disk and the snapshots, the binder and the
 * processes beside it, Placement sync, Nova notifier, retention), appends what the workers ask
 * (src/infra/cluster/write-server.ts), tells them of every commit, relays their pub/sub and keeps
 * their rate-limit counters. Each worker serves GraphQL, REST and WebSocket with its own in-memory
 * read models following the log, which it reads directly (src/infra/cluster/forwarded-writes.ts).
 */
import cluster, { type Worker } from "node:cluster";
import { keepWorkersRateLimits, workerRateLimit } from "../api/rate-limit.js";
import type { Config, Role } from "../infra/config.js";
import type { Logger } from "../infra/logger.js";
import { ClusterPubSub } from "../infra/cluster/cluster-pubsub.js";
import { ForwardedWritesStore } from "../infra/cluster/forwarded-writes.js";
import { everyWorkerAt, PositionRelay } from "../infra/cluster/every-worker.js";
import { primaryChannel, workerChannel, type Channel, type ClusterMessage } from "../infra/cluster/messages.js";
import { CommitSignallingStore, serveWrites } from "../infra/cluster/write-server.js";
import { lmdbDir } from "./adapters.js";
import { startService } from "./main.js";

/** What `serve` needs of a running service. */
export interface Served {
  /** Where the API listens; undefined in a worker (the primary says it once all listen). */
  url: string | undefined;
  close(): Promise<void>;
}

/** A worker that dies after it started is replaced after this long. */
const RESTART_DELAY_MS = 1000;
/** A worker that does not stop when told is killed after this long. */
const STOP_TIMEOUT_MS = 10_000;

export function startWithWorkers(config: Config, log: Logger): Promise<Served> {
  return cluster.isPrimary ? startPrimary(config, log) : startWorker(config, log);
}

async function startPrimary(config: Config, log: Logger): Promise<Served> {
  const channels = new Map<Worker, Channel>();
  const broadcast = (msg: ClusterMessage, except?: Channel) => {
    for (const c of channels.values()) if (c !== except) c.send(msg);
  };
  const pubsub = new ClusterPubSub((msg) => broadcast(msg));
  /** The workers that serve (a starting one answers nothing yet). */
  const serving = new Set<Channel>();
  const progress = new PositionRelay(() => serving);
  keepWorkersRateLimits();
  const reactors: Config = { ...config, roles: new Set([...config.roles].filter((r) => r !== "api")) };
  const service = await startService(reactors, log, {
    decorateStore: (store) => new CommitSignallingStore(store, () => broadcast({ cyborg: "committed" })),
    sharedPubSub: pubsub,
  });
  cluster.setupPrimary({ serialization: "advanced" });
  let stopping = false;

  const fork = (index: number): Promise<string> =>
    new Promise((resolve, reject) => {
      let started = false;
      const worker = cluster.fork({ CYBORG_ES_API_WORKER: String(index) });
      const channel = workerChannel(worker);
      channels.set(worker, channel);
      serveWrites(service.store, channel);
      channel.onMessage((msg) => {
        if (msg.cyborg === "publish") {
          pubsub.deliver(msg);
          broadcast(msg, channel);
        } else if (msg.cyborg === "await") progress.asked(channel, msg);
        else if (msg.cyborg === "reached") progress.answered(channel, msg.id);
        else if (msg.cyborg === "started") {
          started = msg.url !== undefined;
          if (started) serving.add(channel);
          if (msg.url !== undefined) resolve(msg.url);
          else reject(new Error(`API worker ${index} could not start: ${msg.error}`));
        }
      });
      worker.once("exit", (code, signal) => {
        channels.delete(worker);
        serving.delete(channel);
        progress.answered(channel);
        if (!started) return reject(new Error(`API worker ${index} exited (${signal ?? code}) while starting`));
        if (stopping) return;
        log.error({ worker: index, code, signal }, `API worker ${index} exited; starting another in ${RESTART_DELAY_MS} ms`);
        setTimeout(() => {
          if (!stopping) fork(index).catch((err: Error) => log.error({ err, worker: index }, "an API worker could not be started again"));
        }, RESTART_DELAY_MS).unref();
      });
    });

  const stopWorkers = async () => {
    stopping = true;
    await Promise.all([...channels.keys()].map((w) => stopWorker(w)));
  };
  try {
    const urls = await Promise.all(Array.from({ length: config.apiWorkers }, (_, i) => fork(i + 1)));
    log.info({ url: urls[0], workers: config.apiWorkers }, "every API worker is serving");
    return {
      url: urls[0],
      close: async () => {
        await stopWorkers();
        await service.close();
      },
    };
  } catch (err) {
    await stopWorkers();
    await service.close();
    throw err;
  }
}

function stopWorker(worker: Worker): Promise<void> {
  if (worker.isDead()) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => worker.process.kill("SIGKILL"), STOP_TIMEOUT_MS);
    worker.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    worker.process.kill("SIGTERM");
  });
}

async function startWorker(config: Config, log: Logger): Promise<Served> {
  const channel = primaryChannel();
  const index = process.env.CYBORG_ES_API_WORKER ?? String(cluster.worker?.id ?? "?");
  try {
    const { LmdbEventStore } = await import("../infra/eventstore/lmdb.js");
    const store = new ForwardedWritesStore(await LmdbEventStore.open(lmdbDir(config)), channel);
    const pubsub = new ClusterPubSub((msg) => channel.send(msg));
    channel.onMessage((msg) => {
      if (msg.cyborg === "publish") pubsub.deliver(msg);
    });
    // Its own read models (all in memory, the audit index too: the one on disk is the primary's); no retention.
    const api: Config = { ...config, roles: new Set<Role>(["api", "projector"]), RETENTION_DAYS: 0 };
    const service = await startService(api, log.child({ worker: index }), { store, sharedPubSub: pubsub, rateLimit: workerRateLimit, shareProgress: (reached) => everyWorkerAt(channel, reached) });
    channel.send({ cyborg: "started", url: service.url });
    // Without the primary nothing can be written: stop rather than answer with a log that no longer moves.
    channel.onClose(() => void service.close().finally(() => process.exit(1)));
    return { url: undefined, close: () => service.close() };
  } catch (err) {
    channel.send({ cyborg: "started", error: err instanceof Error ? err.message : String(err) });
    throw err;
  }
}

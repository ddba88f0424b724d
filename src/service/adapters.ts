/**
 * The adapters the configuration asks for: EVENTSTORE_URL selects EventStoreDB over the embedded
 * LMDB log, REDIS_URL selects Redis (REDIS_CLUSTER=true: a Redis Cluster) over in-memory read
 * models and in-process pub/sub. Loaded on
 * demand, so the embedded mode never loads a client it does not use.
 */
import { join } from "node:path";
import { name as AUDIT } from "../../projections/audit/projection.js";
import type { ArqQuota } from "../app/arqs/quota.js";
import { ARQS_CLASS } from "../domain/quotas/amounts.js";
import type { ApplicationOptions } from "../app/application.js";
import { ConfigError, type Config } from "../infra/config.js";
import type { EventStore } from "../infra/eventstore/port.js";
import type { Logger } from "../infra/logger.js";
import { redisTargetOf } from "../infra/redis-url.js";
import type { PubSub } from "../infra/pubsub/port.js";
import type { ReadStore } from "../infra/readstore/port.js";
import type { SplitReadStore } from "../infra/readstore/split.js";
import type { MemoryReadStore } from "../infra/readstore/memory.js";
import type { ReadModelSnapshots } from "../infra/readstore/memory-snapshots.js";
import { projections } from "../../projections/index.js";
import { Archive } from "../audit/retention/archive.js";
import { replayLog } from "../audit/retention/archived-log.js";

/** Where the embedded event log lives. */
export const lmdbDir = (config: Pick<Config, "DATA_DIR">): string => join(config.DATA_DIR, "events");

export async function openEventStore(config: Config): Promise<EventStore> {
  if (config.eventLog === "esdb") {
    const { EsdbEventStore } = await import("../infra/eventstore/esdb.js");
    return EsdbEventStore.connect(config.EVENTSTORE_URL!, { namespace: config.EVENTSTORE_NAMESPACE });
  }
  const { LmdbEventStore } = await import("../infra/eventstore/lmdb.js");
  return LmdbEventStore.open(lmdbDir(config));
}

/** Where the embedded audit index lives (AUDIT_INDEX=disk). */
/** Retention's archive segments (docs/audit.md, "Retention"), beside the embedded log. */
export const archiveDir = (config: Pick<Config, "DATA_DIR">): string => join(config.DATA_DIR, "archive");

/**
 * What a read model's rebuild replays: on a store with retention (the embedded log, EventStoreDB), the live log with the hosts' archived
 * periods (docs/operations.md, "Retention"); in memory undefined (the live log itself).
 */
export const rebuildLog = (store: EventStore, config: Pick<Config, "DATA_DIR">): Pick<EventStore, "readAll"> | undefined =>
  store.archiving ? replayLog(store, new Archive(archiveDir(config), store.archiving)) : undefined;

export const auditIndexDir = (config: Pick<Config, "DATA_DIR">): string => join(config.DATA_DIR, "audit-index");
/** Where the embedded mode keeps the read models READ_MODELS_ON_DISK names. */
export const diskModelsDir = (config: Pick<Config, "DATA_DIR">): string => join(config.DATA_DIR, "disk-models");

export interface ReadSideOptions {
  /**
   * The embedded log the server projects: with AUDIT_INDEX=disk the audit index is kept on disk
   * beside it (and checked to be that log's, src/infra/readstore/disk-index.ts). Without it (CLI checks,
   * a store given by a test) every model is in memory: only the server owns the index on disk.
   */
  auditIndexOf?: EventStore;
  log?: Logger;
}

/** Where the embedded mode keeps its snapshots (read models, the binder's and invariant checker's state). */
export const snapshotDir = (config: Pick<Config, "DATA_DIR">): string => join(config.DATA_DIR, "read-models");

export interface ReadSide {
  readStore: ReadStore;
  pubsub: PubSub;
  /** The in-memory models' snapshots, loaded already (embedded, projecting its own log, SNAPSHOT_INTERVAL_S > 0). */
  snapshots?: ReadModelSnapshots;
}

export async function openReadSide(config: Config, options: ReadSideOptions = {}): Promise<ReadSide> {
  if (config.readModels === "redis") {
    const [{ RedisReadStore }, { RedisPubSub }] = await Promise.all([import("../infra/readstore/redis.js"), import("../infra/pubsub/redis.js")]);
    const keyPrefix = config.REDIS_KEY_PREFIX;
    const target = redisTargetOf(config)!;
    return { readStore: new RedisReadStore(target, { keyPrefix }), pubsub: new RedisPubSub(target, { channelPrefix: keyPrefix }) };
  }
  const [{ MemoryReadStore }, { InProcessPubSub }] = await Promise.all([import("../infra/readstore/memory.js"), import("../infra/pubsub/in-process.js")]);
  const memory = new MemoryReadStore();
  const onDisk = modelsOnDisk(config);
  const log = options.auditIndexOf;
  if (log === undefined || (config.AUDIT_INDEX !== "disk" && onDisk.length === 0)) {
    // AUDIT_INDEX=memory: the audit index, which grows with the log, is rebuilt at every start, not written to a snapshot every interval.
    return { readStore: memory, pubsub: new InProcessPubSub(), snapshots: await loadSnapshots(config, memory, options, new Set([AUDIT])) };
  }
  const [{ openDiskIndex }, { SplitReadStore }] = await Promise.all([import("../infra/readstore/disk-index.js"), import("../infra/readstore/split.js")]);
  const apart = new Map<string, ReadStore>();
  const opened: ReadStore[] = [];
  /** Opens one store on disk for `names`; none when another process holds its directory (they stay in memory). */
  const openApart = async (dir: string, names: string[], what: string, instead: string) => {
    const store = await openDiskIndex(dir, names, log, options.log).catch((err: Error) => {
      throw new Error(`cannot open ${what} in ${dir} (${err.message}); ${instead}`, { cause: err });
    });
    if (!store) return;
    opened.push(store);
    for (const name of names) apart.set(name, store);
  };
  try {
    if (config.AUDIT_INDEX === "disk") await openApart(auditIndexDir(config), [AUDIT], "the audit index", "AUDIT_INDEX=memory keeps it in memory instead");
    if (onDisk.length > 0) await openApart(diskModelsDir(config), onDisk, "the read models on disk", "without READ_MODELS_ON_DISK they are kept in memory");
    // The audit index kept in memory is rebuilt at every start (above); a model on disk needs no snapshot.
    const snapshots = await loadSnapshots(config, memory, options, new Set([AUDIT, ...apart.keys()]));
    return { readStore: apart.size > 0 ? new SplitReadStore(memory, apart) : memory, pubsub: new InProcessPubSub(), snapshots };
  } catch (err) {
    await Promise.all(opened.map((s) => s.close()));
    throw err;
  }
}

/** READ_MODELS_ON_DISK, each name checked to be a read model's (the audit index has AUDIT_INDEX). */
export function modelsOnDisk(config: Pick<Config, "READ_MODELS_ON_DISK">): string[] {
  const known = projections.map((p) => p.name).filter((name) => name !== AUDIT);
  const unknown = config.READ_MODELS_ON_DISK.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    const which = unknown.map((n) => JSON.stringify(n)).join(", ");
    throw new ConfigError(`invalid configuration:\n  READ_MODELS_ON_DISK=${JSON.stringify(config.READ_MODELS_ON_DISK.join(","))}: ${which} ${unknown.length === 1 ? "is not a read model" : "are not read models"}; the read models are ${known.join(", ")} (the audit index has AUDIT_INDEX)`);
  }
  return config.READ_MODELS_ON_DISK;
}

/** Loads the snapshots of the models kept in `memory` (all but those `apart` or left out), when this process projects its own embedded log. */
async function loadSnapshots(config: Config, memory: MemoryReadStore, options: ReadSideOptions, apart: ReadonlySet<string>): Promise<ReadModelSnapshots | undefined> {
  if (options.auditIndexOf === undefined || config.SNAPSHOT_INTERVAL_S === 0) return undefined;
  const [{ ReadModelSnapshots }, { projectionLayout }] = await Promise.all([import("../infra/readstore/memory-snapshots.js"), import("./projection-layouts.js")]);
  const kept = projections.filter((p) => !apart.has(p.name)).map((p) => ({ name: p.name, layout: projectionLayout(p.name) }));
  const log = options.log ?? { info: () => undefined, warn: () => undefined, error: () => undefined };
  const snapshots = new ReadModelSnapshots({ store: memory, dir: snapshotDir(config), projections: kept, intervalMs: config.SNAPSHOT_INTERVAL_S * 1000, log });
  await snapshots.load();
  return snapshots;
}

/** What the read models are kept in, for the logs: "memory", "redis", or each projection's store when some are kept apart. */
export const readModelsOf = (store: ReadStore): string | Record<string, string> => (store.kind === "split" ? (store as SplitReadStore).describe() : store.kind);

/** The quota defaults: QUOTA_DEFAULTS, and ARQ_QUOTA_PER_PROJECT as the ARQS limit (0: ARQs are counted, not limited). */
export function arqQuota(config: Pick<Config, "ARQ_QUOTA_PER_PROJECT" | "QUOTA_DEFAULTS">): ArqQuota {
  const defaults: Record<string, number> = { ...config.QUOTA_DEFAULTS };
  if (config.ARQ_QUOTA_PER_PROJECT > 0) defaults[ARQS_CLASS] = config.ARQ_QUOTA_PER_PROJECT;
  return { defaults };
}

/** The bitstream catalogue: Glance when GLANCE_URL is set, else the embedded one (content in DATA_DIR/bitstreams). */
export async function bitstreamOptions(config: Config): Promise<NonNullable<ApplicationOptions["bitstreams"]>> {
  const maxBytes = config.BITSTREAM_MAX_BYTES;
  if (config.GLANCE_URL) {
    const { GlanceCatalogue } = await import("../infra/bitstreams/glance.js");
    return { catalogue: new GlanceCatalogue({ url: config.GLANCE_URL, token: config.GLANCE_TOKEN, maxBytes }) };
  }
  return { contentDir: join(config.DATA_DIR, "bitstreams"), maxBytes };
}

/**
 * The connection to Redis the read store, pub/sub and rate limits share the settings of: one
 * server (REDIS_URL), or a Redis Cluster (REDIS_CLUSTER=true, REDIS_URL naming one or more of
 * its nodes, comma-separated; the client learns the others from them).
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { RedisTarget } from "./redis-url.js";

export type { RedisTarget } from "./redis-url.js";

export type RedisClient = Redis | Cluster;

export const isCluster = (client: RedisClient): client is Cluster => client instanceof Cluster;

/** A client for the target; `options` apply to every node's connection. */
export function connectRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  if (!target.cluster) return new Redis(target.url, options);
  const seeds = target.url.split(",").map(seedOf);
  const first = new URL(target.url.split(",")[0]!);
  const redisOptions: RedisOptions = {
    ...options,
    ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
    ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
    ...(first.protocol === "rediss:" ? { tls: {} } : {}),
  };
  const clusterOptions: ClusterOptions = { redisOptions, enableOfflineQueue: options.enableOfflineQueue ?? true };
  return new Cluster(seeds, clusterOptions);
}

function seedOf(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: u.port === "" ? 6379 : Number(u.port) };
}

/**
 * Calls `listener` when the Redis behind the client may hold other data than before: a server
 * reached again after a lost connection (it may have restarted empty), or on a cluster a slot now
 * served by another master (a replica took over, and may lack the last writes its master took).
 */
export function watchDataChanges(client: RedisClient, listener: () => void): () => void {
  if (isCluster(client)) return watchMasters(client, listener);
  let connected = client.status === "ready";
  const onReady = () => {
    if (connected) listener();
    connected = true;
  };
  client.on("ready", onReady);
  return () => client.off("ready", onReady);
}

function watchMasters(client: Cluster, listener: () => void): () => void {
  let masters = client.slots.map((s) => s[0]);
  const onRefresh = () => {
    const now = client.slots.map((s) => s[0]);
    const changed = masters.length > 0 && now.some((m, i) => m !== masters[i]);
    masters = now;
    if (changed) listener();
  };
  // A master's connection lost: the slots it served may come back on its replica.
  const onNodeGone = () => listener();
  client.on("refresh", onRefresh);
  client.on("-node", onNodeGone);
  return () => {
    client.off("refresh", onRefresh);
    client.off("-node", onNodeGone);
  };
}

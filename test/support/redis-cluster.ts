/**
 * A throwaway Redis Cluster for tests (bench/lib/redis-cluster.ts starts it: three masters and
 * three replicas on free loopback ports, stopped by PID), plus cluster clients that stop with it.
 * Starting one takes several seconds: tests that need it share one per file.
 */
import type { Cluster } from "ioredis";
import { startRedisCluster, type BenchRedisCluster, type ClusterOptions } from "../../bench/lib/redis-cluster.js";
import { connectRedis } from "../../src/infra/redis-client.js";

export interface TestRedisCluster {
  server: BenchRedisCluster;
  /** REDIS_URL (every node) for REDIS_CLUSTER=true. */
  url: string;
  client(): Cluster;
  /** Empties every master. */
  flushall(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestCluster(options: ClusterOptions = {}): Promise<TestRedisCluster> {
  const server = await startRedisCluster(options);
  const clients: Cluster[] = [];
  const admin = connectRedis({ url: server.url, cluster: true }) as Cluster;
  return {
    server,
    url: server.url,
    client() {
      const c = connectRedis({ url: server.url, cluster: true }) as Cluster;
      clients.push(c);
      return c;
    },
    async flushall() {
      await admin.ping(); // connected: nodes() knows the masters
      await Promise.all(admin.nodes("master").map((n) => n.flushall()));
    },
    async stop() {
      for (const c of [...clients, admin]) c.disconnect();
      await server.stop();
    },
  };
}

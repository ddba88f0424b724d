/** What REDIS_URL and REDIS_CLUSTER name, checked without loading a Redis client (config.ts uses it). */

export interface RedisTarget {
  /** One URL, or (cluster) seed nodes' URLs separated by commas. */
  url: string;
  cluster: boolean;
}

export const redisTargetOf = (config: { REDIS_URL?: string; REDIS_CLUSTER: "true" | "false" }): RedisTarget | undefined =>
  config.REDIS_URL === undefined ? undefined : { url: config.REDIS_URL, cluster: config.REDIS_CLUSTER === "true" };

/**
 * Why REDIS_URL cannot name this Redis, or undefined: several nodes only for a cluster, and a
 * cluster has no database but 0.
 */
export function redisUrlProblem(target: RedisTarget): string | undefined {
  const urls = target.url.split(",");
  if (!target.cluster) return urls.length > 1 ? "names several nodes: set REDIS_CLUSTER=true for a Redis Cluster, or name one server" : undefined;
  for (const url of urls) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return `${JSON.stringify(url)} is not a URL`;
    }
    if (u.pathname !== "" && u.pathname !== "/" && u.pathname !== "/0") return `${url}: a Redis Cluster has only database 0 (leave the path out)`;
  }
  return undefined;
}

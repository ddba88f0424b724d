/**
 * The per-token request rate limit (RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_S), for every front
 * door: GraphQL over HTTP, each WebSocket operation, the REST API. A token is counted by its
 * principal; a request without a known token by the client's address. Roles in
 * RATE_LIMIT_EXEMPT_ROLES (the compute service, by default) are not counted.
 *
 * rate-limiter-flexible keeps the counters: in Redis when REDIS_URL is set (API replicas share
 * them), in memory otherwise. When Redis cannot answer, each process goes on counting in memory
 * (its insurance limiter): the limit still holds, per process.
 */
import type { RedisClient as Redis } from "../infra/redis-client.js";
import { redisTargetOf } from "../infra/redis-url.js";
import { RateLimiterCluster, RateLimiterClusterMaster, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Config } from "../infra/config.js";
import type { Principal, Role } from "./auth/tokens.js";

export interface RateLimitSettings {
  /** Requests per window; 0 turns the limit off. */
  requests: number;
  windowS: number;
  exemptRoles: ReadonlySet<Role>;
  /** Share the counters through this Redis. */
  redisUrl?: string;
  /** Put before the counters' keys (REDIS_KEY_PREFIX). */
  redisKeyPrefix?: string;
}

/** Refused: ask again after this many seconds. */
export interface RateLimited {
  retryAfterS: number;
  limit: number;
  windowS: number;
}

export class RateLimit {
  private readonly limiter: RateLimiterAbstract | undefined;
  private readonly redis: Redis | undefined;

  /** `redis`: the connection for the shared counters (rateLimitFor opens it when settings.redisUrl is set). */
  /** `shared`: counters kept elsewhere (the API workers': in the primary process), instead of this process's memory. */
  constructor(
    private readonly settings: RateLimitSettings,
    redis?: Redis,
    shared?: RateLimiterAbstract,
  ) {
    if (settings.requests === 0) return;
    if (shared) {
      this.limiter = shared;
      return;
    }
    const options = rateLimiterOptions(settings);
    const memory = new RateLimiterMemory(options);
    if (!redis) {
      this.limiter = memory;
      return;
    }
    this.redis = redis;
    this.redis.on("error", () => undefined);
    this.limiter = new RateLimiterRedis({ ...options, storeClient: this.redis, insuranceLimiter: memory });
  }

  /** Resolves once the shared counters answer (or after `timeoutMs`: the process counts alone until they do). */
  async connected(timeoutMs = 5000): Promise<void> {
    const redis = this.redis;
    if (!redis || redis.status === "ready") return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        redis.off("ready", done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      redis.on("ready", done);
    });
  }

  get enabled(): boolean {
    return this.limiter !== undefined;
  }

  /**
   * Counts one request of the principal (or, without one, of the address); undefined when it may
   * go on. A limiter that fails for another reason than the limit refuses too: a guard that cannot
   * check fails closed.
   */
  async take(principal: Principal | null | undefined, address: string | undefined): Promise<RateLimited | undefined> {
    if (!this.limiter) return undefined;
    if (principal && [...principal.roles].some((r) => this.settings.exemptRoles.has(r))) return undefined;
    const key = principal ? `token:${principal.principal}` : `address:${address ?? "unknown"}`;
    try {
      await this.limiter.consume(key);
      return undefined;
    } catch (res) {
      const ms = res instanceof RateLimiterRes ? res.msBeforeNext : this.settings.windowS * 1000;
      return { retryAfterS: Math.max(1, Math.ceil(ms / 1000)), limit: this.settings.requests, windowS: this.settings.windowS };
    }
  }

  async close(): Promise<void> {
    this.redis?.disconnect();
  }
}

const rateLimiterOptions = (settings: RateLimitSettings) => ({ points: settings.requests, duration: settings.windowS, keyPrefix: `${settings.redisKeyPrefix ?? ""}cyborg-es:rate` });

const settingsOf = (config: Config): RateLimitSettings => ({ requests: config.RATE_LIMIT_REQUESTS, windowS: config.RATE_LIMIT_WINDOW_S, exemptRoles: exemptRolesOf(config), redisUrl: config.REDIS_URL, redisKeyPrefix: config.REDIS_KEY_PREFIX });

/**
 * The API workers' rate limit: every worker counts in the primary process (which must have called
 * `keepWorkersRateLimits` before it forked them), so a token has one budget however the
 * connections are spread. A count the primary does not answer within a second refuses the request.
 */
export async function workerRateLimit(config: Config): Promise<RateLimit> {
  const settings = settingsOf(config);
  if (settings.requests === 0) return new RateLimit(settings);
  return new RateLimit(settings, undefined, new RateLimiterCluster({ ...rateLimiterOptions(settings), timeoutMs: 1000 }));
}

/** In the primary process: keeps the counters of every worker's rate limit. */
export const keepWorkersRateLimits = (): void => void new RateLimiterClusterMaster();

export const rateLimitedMessage = (r: RateLimited) =>
  `too many requests: a token may make ${r.limit} per ${r.windowS} s (RATE_LIMIT_REQUESTS); try again in ${r.retryAfterS} s`;

/** The roles RATE_LIMIT_EXEMPT_ROLES names: not rate limited, and their sockets not capped. */
export const exemptRolesOf = (config: Config): ReadonlySet<Role> => new Set(config.RATE_LIMIT_EXEMPT_ROLES.split(",").filter(Boolean) as Role[]);

export async function rateLimitFor(config: Config): Promise<RateLimit> {
  const settings = settingsOf(config);
  const target = redisTargetOf(config);
  // Its own connection, failing fast while Redis is away (the insurance limiter counts meanwhile); ioredis is loaded only then.
  // Each counter is one key (one slot): it runs on a Redis Cluster as on one server.
  const redis = settings.requests > 0 && target ? (await import("../infra/redis-client.js")).connectRedis(target, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }) : undefined;
  const limit = new RateLimit(settings, redis);
  await limit.connected();
  return limit;
}

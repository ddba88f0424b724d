import { availableParallelism } from "node:os";
import { z } from "zod";
import type { HealthRule } from "../domain/inventory/health-rules.js";
import { loadHealthRules } from "./health-rules-file.js";
import { redisUrlProblem } from "./redis-url.js";

/** The environment variables (docs/configuration.md; the contract in docs/graphql-api.md), validated once at start. */
const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: z.string().min(1).default("./data"),
  /**
   * Embedded mode: where the audit index (history, trace) lives. `disk`: in DATA_DIR/audit-index,
   * beside the log (no memory that grows with the log); `memory`: in the process, with the other
   * read models (about 11-15 KB a boot flow, for ever). With REDIS_URL it is in Redis.
   */
  AUDIT_INDEX: z.enum(["disk", "memory"]).default("disk"),
  /**
   * Embedded mode: read models kept on disk in DATA_DIR/disk-models instead of the process's heap
   * (names separated by commas, e.g. device-tree,deployables,resource-providers): a large fleet's
   * models, whose size in memory makes the garbage collector pause the service. Empty: all in memory.
   */
  READ_MODELS_ON_DISK: z
    .string()
    .regex(/^[a-z][a-z-]*(,[a-z][a-z-]*)*$/, "read-model names separated by commas, e.g. device-tree,deployables,resource-providers")
    .optional()
    .transform((list) => (list ? [...new Set(list.split(","))] : [])),
  /**
   * Embedded mode: how often the in-memory read models are written to DATA_DIR/read-models (each
   * one whose checkpoint moved; and once more at a clean stop), so that a restart reads only the
   * log after them. 0: no snapshots (every start rebuilds them from the whole log).
   */
  SNAPSHOT_INTERVAL_S: z.coerce.number().int().min(0).max(86_400).default(60),
  /**
   * How long a clean stop (SIGTERM, SIGINT) may take before the process exits anyway. A stop drains
   * requests, then writes every read model that moved since its snapshot: at 10,000 hosts after a
   * first start, 15-20 s of snapshots. A model left unwritten is rebuilt from the log at the next
   * start, so this is set above what the stop needs, and the orchestrator's grace period above it.
   */
  SHUTDOWN_TIMEOUT_S: z.coerce.number().int().min(1).max(3_600).default(120),
  EVENTSTORE_URL: z
    .string()
    .regex(/^(esdb|kurrentdb|kdb)(\+discover)?:\/\//, "must be a connection string such as esdb://localhost:2113?tls=false")
    .optional(),
  /**
   * With EVENTSTORE_URL: the namespace this deployment's streams live in, so that deployments can
   * share one EventStoreDB (streams named `@<namespace>/<stream>`). Empty (the default): the
   * streams as they always were named.
   */
  EVENTSTORE_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, '1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit (e.g. cyborg-a)')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/[^,]+(,rediss?:\/\/[^,]+)*$/, "must be a URL such as redis://localhost:6379 (with REDIS_CLUSTER=true, one or more nodes' URLs separated by commas)")
    .optional(),
  /** REDIS_URL names nodes of a Redis Cluster (one is enough: the others are learnt from it). */
  REDIS_CLUSTER: z.enum(["true", "false"]).default("false"),
  /**
   * Put before every key and channel this service uses in Redis (read models, notifications, rate
   * limits), so that deployments can share one Redis on purpose. Empty (the default): the keys as
   * they always were, so an existing deployment keeps its read models.
   */
  REDIS_KEY_PREFIX: z.string().regex(/^[^{}\s]*$/, "no braces or spaces (e.g. cyborg-a:)").default(""),
  AUTH_TOKENS_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  BIND_TIMEOUT_S: z.coerce.number().positive().max(3600).default(60),
  /** How long the holders of a device with a NoExecute taint are given to move, from the taint (their eviction notice's deadline). */
  EVICTION_DEADLINE_S: z.coerce.number().positive().max(30 * 86_400).default(300),
  /** Keep a released partition made and free for its profile's next ARQ instead of destroying it (docs/partitions.md). */
  PARTITION_KEEP_IDLE: z.enum(["true", "false"]).default("false"),
  /** How long a host's agent has to report a clean before the device is FAILED with "no agent answered" (docs/device-health.md). */
  CLEAN_TIMEOUT_S: z.coerce.number().positive().max(86_400).default(600),
  /** The period the agents report at (their --interval): a host's liveness is measured in these. */
  AGENT_REPORT_INTERVAL_S: z.coerce.number().positive().max(86_400).default(60),
  /** Periods without a report after which a host is stale (os-acc's initialize refuses it; binds that need programming fail). */
  AGENT_STALE_AFTER_PERIODS: z.coerce.number().positive().max(1000).default(3),
  /** Periods without a report after which a host is gone. */
  AGENT_GONE_AFTER_PERIODS: z.coerce.number().positive().max(10_000).default(10),
  /** Whole host reports decided at once; more wait (REPORT_MAX_QUEUED) or are refused with Retry-After (docs/configuration.md). */
  REPORT_MAX_IN_FLIGHT: z.coerce.number().int().positive().max(10_000).default(16),
  /** Whole host reports waiting for their turn; past it a report is refused (HTTP 503, Retry-After). */
  REPORT_MAX_QUEUED: z.coerce.number().int().min(0).max(1_000_000).default(512),
  /** The least a refused agent is asked to wait, in seconds; each is asked for up to twice that, at random, so they come back spread out. */
  REPORT_RETRY_AFTER_S: z.coerce.number().int().positive().max(3600).default(5),
  /** A JSON file of health rules (docs/configuration.md, "Health rules"); the documented default without it. */
  HEALTH_RULES_FILE: z.string().min(1).optional(),
  MAX_BINDINGS_PER_MUTATION: z.coerce.number().int().positive().max(10_000).default(100),
  MAX_BODY_BYTES: z.coerce.number().int().positive().default(1_048_576),
  GLANCE_URL: z.string().regex(/^https?:\/\//, "must be a URL such as http://127.0.0.1:9292").optional(),
  GLANCE_TOKEN: z.string().min(1).optional(),
  BITSTREAM_MAX_BYTES: z.coerce.number().int().positive().default(1_073_741_824),
  /** Prometheus metrics at GET /metrics (on by default: about 1.6% of the server's CPU, bench/RESULTS.md). */
  METRICS: z.enum(["on", "off"]).default("on"),
  /** Serve /metrics on this port instead of the API's (same HOST), e.g. to keep it off a public listener. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /**
   * Embedded mode: how many processes serve the API (GraphQL, REST, WebSocket) on the one LMDB log;
   * `cores` is one per core. Beside them one process writes the log and runs the reactors.
   */
  API_WORKERS: z
    .string()
    .regex(/^(cores|[1-9]\d{0,2})$/, "a number of API workers (1-256) or cores")
    .default("1"),
  ROLES: z
    .string()
    .regex(/^(api|projector|binder|placement|nova)(,(api|projector|binder|placement|nova))*$/, "a comma list of api, projector, binder, placement, nova")
    .default("api,projector,binder"),
  /**
   * How the REST API (Cyborg v2) authenticates: `keystone` looks X-Auth-Token up in the token
   * file; `noauth` (development only) treats every REST request as an admin of project "noauth".
   */
  REST_AUTH: z.enum(["keystone", "noauth"]).default("keystone"),
  /** Placement's endpoint; the `placement` role keeps it in sync with the inventory. */
  PLACEMENT_URL: z.string().regex(/^https?:\/\/[^/]/, "must be a URL such as http://127.0.0.1:8778").optional(),
  /** Sent as X-Auth-Token (a real deployment gets it from Keystone). */
  PLACEMENT_TOKEN: z.string().min(1).optional(),
  /** A host whose compute-node provider is missing: wait for Nova to make it, or create a root provider named after the host. */
  PLACEMENT_MISSING_COMPUTE_NODE: z.enum(["wait", "create"]).default("wait"),
  /** How often hosts that Placement could not match yet are tried again (missing compute node, allocations on a provider to remove). */
  PLACEMENT_RETRY_S: z.coerce.number().positive().max(3600).default(30),
  /** Requests in flight to Placement at once. */
  PLACEMENT_CONCURRENCY: z.coerce.number().int().positive().max(64).default(4),
  /** Requests one token may make per RATE_LIMIT_WINDOW_S (0: no limit); counted in Redis when REDIS_URL is set, so replicas share it. */
  RATE_LIMIT_REQUESTS: z.coerce.number().int().min(0).max(1_000_000).default(100),
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().positive().max(3600).default(1),
  /** Token roles the rate limit does not apply to: the compute service drives every boot; admins run the cloud. */
  RATE_LIMIT_EXEMPT_ROLES: z
    .string()
    .regex(/^$|^(admin|manager|member|reader|service|agent)(,(admin|manager|member|reader|service|agent))*$/, "a comma list of token roles")
    .default("admin,service"),
  /** WebSocket connections one token may hold open on one API process (0: no cap); roles in RATE_LIMIT_EXEMPT_ROLES are not capped. */
  WS_MAX_CONNECTIONS_PER_TOKEN: z.coerce.number().int().min(0).max(1_000_000).default(64),
  /** Subscriptions one token may hold open on one API process, over all its connections (0: no cap); exempt roles as above. */
  WS_MAX_SUBSCRIPTIONS_PER_TOKEN: z.coerce.number().int().min(0).max(1_000_000).default(256),
  /** Each GraphQL query's and mutation's execution time budget: past it, its next field answers TIMEOUT (503). */
  REQUEST_TIMEOUT_S: z.coerce.number().positive().max(3600).default(30),
  /** How long an Idempotency-Key is remembered: a retry within it gets the first answer. */
  /**
   * Retention (docs/audit.md): streams that ended this many days ago (deleted ARQs and profiles,
   * expired idempotency keys) move from the live log into archive segments. 0 or `off`: never.
   */
  RETENTION_DAYS: z
    .union([z.literal("off").transform(() => 0), z.coerce.number().min(0).max(36_500)])
    .default(90),
  /**
   * Closing the books of host streams (docs/operations.md, "Retention"): a host's period closes
   * with a summary of its state once it holds this many events (0: never), or once it began
   * HOST_PERIOD_DAYS ago and holds any event since (0: no limit by age).
   */
  HOST_PERIOD_EVENTS: z.coerce.number().int().min(0).max(10_000_000).default(1000),
  HOST_PERIOD_DAYS: z.coerce.number().min(0).max(36_500).default(30),
  /** How often retention runs in the projector role (seconds). */
  RETENTION_INTERVAL_S: z.coerce.number().int().min(60).max(30 * 86_400).default(86_400),
  IDEMPOTENCY_TTL_S: z.coerce.number().int().positive().max(30 * 86_400).default(86_400),
  /** Most ARQs a project may hold (0: no quota); checked when a token without the admin or service role creates ARQs. */
  ARQ_QUOTA_PER_PROJECT: z.coerce.number().int().min(0).max(10_000_000).default(1000),
  /**
   * Default quota limits per resource class, as JSON (e.g. {"GPU":8,"FPGA":2}), for projects that
   * set none of their own for a class (docs/quotas.md); ARQ_QUOTA_PER_PROJECT is the ARQS limit.
   */
  QUOTA_DEFAULTS: z
    .string()
    .default("{}")
    .transform((text, zctx) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
      const ok = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) &&
        Object.entries(parsed).every(([cls, n]) => /^[A-Z0-9_]{1,255}$/.test(cls) && Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 10_000_000);
      if (!ok) {
        zctx.addIssue({ code: "custom", message: 'must be a JSON object of resource classes and whole-number limits, e.g. {"GPU":8,"FPGA":2}' });
        return z.NEVER;
      }
      return parsed as Record<string, number>;
    }),
  /** Nova's compute endpoint; the `nova` role sends it accelerator-request-bound for every bind that completes or fails. */
  NOVA_URL: z.string().regex(/^https?:\/\/[^/]/, "must be a URL such as http://controller:8774/v2.1").optional(),
  /** Sent as X-Auth-Token (a token whose user Nova's os-server-external-events policy admits: admin or service). */
  NOVA_TOKEN: z.string().min(1).optional(),
  /** How long an event Nova answers 422 for (instance not on a host yet) is tried again; Nova's arq_binding_timeout is 300 s. */
  NOVA_EVENT_RETRY_S: z.coerce.number().positive().max(86_400).default(300),
});

/** A listening address that only this machine reaches. */
export const isLoopback = (host: string): boolean => host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/**
 * Each store is picked by its own variable: EVENTSTORE_URL selects EventStoreDB over the embedded
 * LMDB log, REDIS_URL selects Redis over in-memory read models and in-process pub/sub.
 */
export type Role = "api" | "projector" | "binder" | "placement" | "nova";

export type Config = z.infer<typeof schema> & {
  mode: "embedded" | "production";
  eventLog: "lmdb" | "esdb";
  readModels: "memory" | "redis";
  roles: Set<Role>;
  /** API_WORKERS as a number (`cores`: this machine's). */
  apiWorkers: number;
  /** HEALTH_RULES_FILE's rules, read and checked at start (the default rules without it). */
  healthRules: readonly HealthRule[];
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parse the environment; the error names every bad variable and what it should be. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? "environment");
      return `  ${name}=${JSON.stringify(env[name] ?? "")}: ${i.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  const mode = c.EVENTSTORE_URL || c.REDIS_URL ? "production" : "embedded";
  if (c.REST_AUTH === "noauth" && mode === "production") {
    throw new ConfigError(
      'invalid configuration:\n  REST_AUTH="noauth": refused in the production mode (EVENTSTORE_URL or REDIS_URL set); it is for development only',
    );
  }
  if (c.REST_AUTH === "noauth" && !isLoopback(c.HOST)) {
    throw new ConfigError(
      `invalid configuration:\n  REST_AUTH="noauth": refused with HOST=${JSON.stringify(c.HOST)}; every REST request would be an admin's, so it listens on loopback only (HOST=127.0.0.1 or ::1)`,
    );
  }
  if (c.EVENTSTORE_NAMESPACE && !c.EVENTSTORE_URL) {
    throw new ConfigError(`invalid configuration:\n  EVENTSTORE_NAMESPACE=${JSON.stringify(c.EVENTSTORE_NAMESPACE)}: it names streams in EventStoreDB, so it needs EVENTSTORE_URL (the embedded log has no namespaces)`);
  }
  const redisProblem = c.REDIS_URL === undefined ? undefined : redisUrlProblem({ url: c.REDIS_URL, cluster: c.REDIS_CLUSTER === "true" });
  if (redisProblem) throw new ConfigError(`invalid configuration:\n  REDIS_URL=${JSON.stringify(c.REDIS_URL)}: ${redisProblem}`);
  if (c.READ_MODELS_ON_DISK.length > 0 && c.REDIS_URL) {
    throw new ConfigError(
      `invalid configuration:\n  READ_MODELS_ON_DISK=${JSON.stringify(c.READ_MODELS_ON_DISK.join(","))}: with REDIS_URL every read model is in Redis; the setting is for the embedded mode`,
    );
  }
  if (c.REDIS_CLUSTER === "true" && !c.REDIS_URL) {
    throw new ConfigError("invalid configuration:\n  REDIS_CLUSTER=true: it says REDIS_URL names a Redis Cluster's nodes, so it needs REDIS_URL (e.g. redis://10.0.0.1:7000,redis://10.0.0.2:7000)");
  }
  if (c.AGENT_GONE_AFTER_PERIODS <= c.AGENT_STALE_AFTER_PERIODS) {
    throw new ConfigError(
      `invalid configuration:\n  AGENT_GONE_AFTER_PERIODS=${c.AGENT_GONE_AFTER_PERIODS}: must be more than AGENT_STALE_AFTER_PERIODS=${c.AGENT_STALE_AFTER_PERIODS} (a host is stale before it is gone)`,
    );
  }
  const roles = new Set(c.ROLES.split(",") as Role[]);
  // Without ROLES, setting PLACEMENT_URL is enough to keep Placement in sync.
  if (present.ROLES === undefined && c.PLACEMENT_URL) roles.add("placement");
  if (roles.has("placement") && !c.PLACEMENT_URL) {
    throw new ConfigError(`invalid configuration:\n  ROLES=${JSON.stringify(c.ROLES)}: the placement role needs PLACEMENT_URL (and PLACEMENT_TOKEN)`);
  }
  // Likewise NOVA_URL is enough to send Nova its events.
  if (present.ROLES === undefined && c.NOVA_URL) roles.add("nova");
  if (roles.has("nova") && !c.NOVA_URL) {
    throw new ConfigError(`invalid configuration:\n  ROLES=${JSON.stringify(c.ROLES)}: the nova role needs NOVA_URL (Nova's compute endpoint, e.g. http://controller:8774/v2.1) and NOVA_TOKEN`);
  }
  // `cores` where workers cannot run (EventStoreDB, Redis, an API-only process) is one: those scale by replicas.
  const workersFit = !c.EVENTSTORE_URL && !c.REDIS_URL && roles.has("api") && roles.has("projector");
  const apiWorkers = c.API_WORKERS === "cores" ? (workersFit ? availableParallelism() : 1) : Number(c.API_WORKERS);
  if (apiWorkers > 256) throw new ConfigError(`invalid configuration:\n  API_WORKERS=${JSON.stringify(c.API_WORKERS)}: at most 256 API workers`);
  if (apiWorkers > 1 && !workersFit) {
    throw new ConfigError(
      `invalid configuration:\n  API_WORKERS=${JSON.stringify(c.API_WORKERS)}: several API workers share the embedded LMDB log and keep their read models in memory; they need neither EVENTSTORE_URL nor REDIS_URL, and ROLES with api and projector (with EventStoreDB or Redis, run more replicas instead)`,
    );
  }
  let healthRules: readonly HealthRule[];
  try {
    healthRules = loadHealthRules(c.HEALTH_RULES_FILE);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  ${(err as Error).message}`);
  }
  return {
    ...c,
    mode,
    eventLog: c.EVENTSTORE_URL ? "esdb" : "lmdb",
    readModels: c.REDIS_URL ? "redis" : "memory",
    roles,
    apiWorkers,
    healthRules,
  };
}

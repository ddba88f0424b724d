import { z } from "zod";

/** Environment variables of docs/graphql-api.md, validated once at start. */
const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: z.string().min(1).default("./data"),
  EVENTSTORE_URL: z
    .string()
    .regex(/^(esdb|kurrentdb|kdb)(\+discover)?:\/\//, "must be a connection string such as esdb://localhost:2113?tls=false")
    .optional(),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, "must be a URL such as redis://localhost:6379").optional(),
  AUTH_TOKENS_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  BIND_TIMEOUT_S: z.coerce.number().positive().max(3600).default(60),
  MAX_BINDINGS_PER_MUTATION: z.coerce.number().int().positive().max(10_000).default(100),
  MAX_BODY_BYTES: z.coerce.number().int().positive().default(1_048_576),
  /** Prometheus metrics at GET /metrics (on by default: about 1.6% of the server's CPU, bench/RESULTS.md). */
  METRICS: z.enum(["on", "off"]).default("on"),
  /** Serve /metrics on this port instead of the API's (same HOST), e.g. to keep it off a public listener. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  ROLES: z
    .string()
    .regex(/^(api|projector|binder)(,(api|projector|binder))*$/, "a comma list of api, projector, binder")
    .default("api,projector,binder"),
  /**
   * How the REST API (Cyborg v2) authenticates: `keystone` looks X-Auth-Token up in the token
   * file; `noauth` (development only) treats every REST request as an admin of project "noauth".
   */
  REST_AUTH: z.enum(["keystone", "noauth"]).default("keystone"),
});

/**
 * Each store is picked by its own variable: EVENTSTORE_URL selects EventStoreDB over the embedded
 * LMDB log, REDIS_URL selects Redis over in-memory read models and in-process pub/sub.
 */
export type Config = z.infer<typeof schema> & {
  mode: "embedded" | "production";
  eventLog: "lmdb" | "esdb";
  readModels: "memory" | "redis";
  roles: Set<"api" | "projector" | "binder">;
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
  return {
    ...c,
    mode,
    eventLog: c.EVENTSTORE_URL ? "esdb" : "lmdb",
    readModels: c.REDIS_URL ? "redis" : "memory",
    roles: new Set(c.ROLES.split(",") as Array<"api" | "projector" | "binder">),
  };
}

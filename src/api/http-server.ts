import { ApolloServer } from "@apollo/server";
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from "@apollo/server/plugin/disabled";
import type { GraphQLFormattedError, GraphQLSchema } from "graphql";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../infra/logger.js";
import { operationsPlugin } from "../observability/graphql-plugin.js";
import type { Metrics } from "../observability/metrics.js";
import { sendMetrics } from "../observability/metrics-server.js";
import type { Tracing } from "../observability/tracing.js";
import type { TokenRegistry } from "./auth/tokens.js";
import type { ApiContext } from "./graphql/context.js";
import { DocumentCache } from "./graphql/document-cache.js";
import type { ApiServices } from "./services.js";
import { formatError, unavailableStatusPlugin } from "./graphql/errors.js";
import { warningsPlugin } from "./graphql/warnings.js";
import { DEFAULT_GUARDS, guardPlugin } from "./graphql/guards.js";
import { getSchema } from "./graphql/schema.js";
import { graphqlOverHttp, type GraphqlHandler } from "./graphql-http.js";
import { startGraphqlWs } from "./graphql-ws-server.js";
import { headerValue, readBody, sendJson, splitUrl } from "./http-util.js";
import type { RestAuthMode } from "./rest/auth.js";
import { createRestRouter } from "./rest/router.js";
import type { RateLimit } from "./rate-limit.js";
import type { SocketQuota } from "./socket-quota.js";
import { defaultSiteRoot, StaticSite } from "./static-site.js";

/** A route beside GraphQL: answers the request and returns true, or returns false to pass it on. */
export type HttpRoute = (req: IncomingMessage, res: ServerResponse, pathname: string, search: string) => Promise<boolean>;

export interface HttpServerOptions {
  services: ApiServices;
  tokens: TokenRegistry;
  log: Logger;
  maxBodyBytes: number;
  /** GET /readyz: the event store answers and the projections have caught up. */
  ready(): Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  /** The Cyborg v2 REST API's authentication (REST_AUTH); keystone when not given. */
  restAuth?: RestAuthMode;
  /** Counts GraphQL operations; served at GET /metrics (to an admin token) unless `metricsElsewhere` (METRICS_PORT). */
  metrics?: Metrics;
  metricsElsewhere?: boolean;
  tracing?: Tracing;
  /** The console's build output (default: dist/console under the project). */
  siteRoot?: string;
  /** The per-token request rate limit, for every front door (none when not given). */
  rateLimit?: RateLimit;
  /** Per-token caps on open WebSocket connections and subscriptions (none when not given). */
  socketQuota?: SocketQuota;
  /**
   * GET /console/config.json, for anyone: what the sign-in page and the explorer tell a newcomer
   * (the command that prints the admin token of an embedded service's DATA_DIR).
   */
  consoleConfig?: { adminTokenCommand?: string };
  /** Routes tried before GraphQL's 404 (bitstream content). */
  routes?: HttpRoute[];
  /** Every GraphQL request through Apollo's pipeline, none run directly (graphql/direct-operation.ts). */
  apolloOnly?: boolean;
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

type Format = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

/**
 * One node:http server: GraphQL over HTTP at POST /graphql (graphql-http.ts), graphql-ws on the
 * same path (graphql-ws-server.ts), /healthz, /readyz, /metrics, the console and the explorer,
 * and the Cyborg v2 REST API (rest/router.ts) at /, /v2 and /accelerator.
 */
export async function startHttpServer(opts: HttpServerOptions, port: number, host: string): Promise<RunningServer> {
  const schema = await getSchema();
  const operations = operationsPlugin({ schema, metrics: opts.metrics, tracing: opts.tracing });
  const format = formatError((err) => opts.log.error({ err, correlationId: operations.correlationOf(err) }, "internal error in a GraphQL operation"));
  const apollo = await startApollo(schema, format, operations.plugin);
  const documents = new DocumentCache(schema);
  const graphql = graphqlOverHttp({ apollo, direct: opts.apolloOnly ? undefined : { schema, documents, format, observe: operations.observe }, ...opts });
  const handle = router(opts, graphql);
  const http = createServer((req, res) => {
    handle(req, res).catch((err) => {
      opts.log.error({ err, correlationId: headerValue(req.headers["x-correlation-id"]) }, "request failed");
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: "internal error", extensions: { code: "INTERNAL_SERVER_ERROR" } }] });
      else res.end();
    });
  });
  http.keepAliveTimeout = 65_000;
  const ws = startGraphqlWs({ http, schema, services: opts.services, tokens: opts.tokens, log: opts.log, maxPayload: opts.maxBodyBytes, rateLimit: opts.rateLimit, quota: opts.socketQuota, format, documents });
  const addr = await listen(http, port, host);
  const shownHost = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shownHost}:${addr.port}/graphql`,
    port: addr.port,
    async close() {
      await ws.close();
      const closed = new Promise<void>((r) => http.close(() => r()));
      http.closeIdleConnections();
      const force = setTimeout(() => http.closeAllConnections(), 5_000);
      await closed;
      clearTimeout(force);
      await apollo.stop();
    },
  };
}

async function startApollo(schema: GraphQLSchema, format: Format, operations: ReturnType<typeof operationsPlugin>["plugin"]): Promise<ApolloServer<ApiContext>> {
  const apollo = new ApolloServer<ApiContext>({
    schema,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    parseOptions: { maxTokens: DEFAULT_GUARDS.maxTokens },
    // `cyborg-es serve` stops the whole service on SIGTERM/SIGINT; Apollo's own handler would stop
    // only Apollo and then re-raise the signal, killing the process before the graceful close
    // (stores, checkpoints, the last spans) finished.
    stopOnTerminationSignals: false,
    formatError: format,
    // No cache hints are served, and the cache-control plugin wraps every field resolver to
    // collect them (~2% of the server's CPU under load).
    // The landing page would load Apollo's explorer from a CDN: GET /graphql serves our own (console/).
    plugins: [
      operations,
      guardPlugin(schema),
      unavailableStatusPlugin,
      warningsPlugin,
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginLandingPageDisabled(),
    ],
  });
  await apollo.start();
  return apollo;
}

/** Which part of the server answers a request, in order. */
function router(opts: HttpServerOptions, graphql: GraphqlHandler) {
  const site = new StaticSite(opts.siteRoot ?? defaultSiteRoot(), "/console/");
  const rest = createRestRouter({
    services: opts.services,
    tokens: opts.tokens,
    log: opts.log,
    auth: opts.restAuth ?? "keystone",
    readBody: (req) => readBody(req, opts.maxBodyBytes),
    maxBodyBytes: opts.maxBodyBytes,
    rateLimit: opts.rateLimit,
  });
  const isAdmin = (req: IncomingMessage) => opts.tokens.authenticate(req.headers.authorization)?.roles.has("admin") === true;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = splitUrl(req.url ?? "/");
    if (url.pathname === "/healthz") return sendJson(res, 200, { status: "ok" });
    if (url.pathname === "/readyz") return readyz(opts, res, isAdmin(req));
    if (url.pathname === "/metrics" && opts.metrics && !opts.metricsElsewhere) {
      if (!isAdmin(req)) return sendJson(res, 401, { error: "the metrics need an admin token (Authorization: Bearer <token>), or serve them on a port of their own with METRICS_PORT" });
      return sendMetrics(opts.metrics, res);
    }
    if (url.pathname === "/console/config.json" && req.method === "GET") return sendJson(res, 200, opts.consoleConfig ?? {});
    if (site.serve(req, res, url.pathname)) return;
    for (const route of url.pathname === "/graphql" ? [] : (opts.routes ?? [])) if (await route(req, res, url.pathname, url.search.replace(/^\?/, ""))) return;
    if (url.pathname !== "/graphql" && (await rest(req, res, url.pathname, url.search))) return;
    if (url.pathname !== "/graphql") return sendJson(res, 404, { error: `no route ${url.pathname}; GraphQL is at /graphql, the console at /console` });
    // A browser asking for /graphql gets the GraphQL explorer (GraphiQL, built into dist/console);
    // ?query= fills its editor.
    if (req.method === "GET" && String(req.headers.accept ?? "").includes("text/html")) return site.page(req, res, "graphiql.html");
    return graphql(req, res, url.search);
  };
}

/** Ready or not for anyone (a load balancer's probe); the log's head, each model and follower only for an admin token. */
async function readyz(opts: HttpServerOptions, res: ServerResponse, detailed: boolean): Promise<void> {
  const r = await opts.ready().catch((err: Error) => ({ ok: false, detail: { error: err.message } }));
  return sendJson(res, r.ok ? 200 : 503, { status: r.ok ? "ready" : "not ready", ...(detailed ? r.detail : {}) });
}

async function listen(http: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => resolve());
  });
  return http.address() as AddressInfo;
}

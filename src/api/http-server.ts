import { ApolloServer, HeaderMap } from "@apollo/server";
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from "@apollo/server/plugin/disabled";
import { GraphQLError } from "graphql";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import getRawBody from "raw-body";
import type { Logger } from "../logger.js";
import { operationsPlugin } from "../observability/graphql-plugin.js";
import type { Metrics } from "../observability/metrics.js";
import { sendMetrics } from "../observability/metrics-server.js";
import { CORRELATION_ATTRIBUTE, run as runInSpan, SpanKind, type Tracing } from "../observability/tracing.js";
import type { TokenRegistry } from "./auth/tokens.js";
import { createContext, validCorrelationId, type ApiContext, type ApiServices } from "./graphql/context.js";
import { formatError, unavailableStatusPlugin } from "./graphql/errors.js";
import { DocumentCache } from "./graphql/document-cache.js";
import { checkGuards, DEFAULT_GUARDS, guardPlugin, queryTextRefusal } from "./graphql/guards.js";
import { getSchema } from "./graphql/schema.js";
import type { RestAuthMode } from "./rest/auth.js";
import { createRestRouter } from "./rest/router.js";
import { rateLimitedMessage, type RateLimit } from "./rate-limit.js";
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
  /** Counts GraphQL operations; served at GET /metrics unless `metricsElsewhere` (METRICS_PORT). */
  metrics?: Metrics;
  metricsElsewhere?: boolean;
  tracing?: Tracing;
  /** The console's build output (default: dist/console under the project). */
  siteRoot?: string;
  /** The per-token request rate limit, for every front door (none when not given). */
  rateLimit?: RateLimit;
  /** Routes tried before GraphQL's 404 (bitstream content). */
  routes?: HttpRoute[];
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * One node:http server: GraphQL over HTTP at POST /graphql (Apollo's executeHTTPGraphQLRequest,
 * no framework: it halves the cost per request here), graphql-ws on the same path, /healthz, /readyz,
 * and the Cyborg v2 REST API (rest/router.ts) at /, /v2 and /accelerator.
 */
export async function startHttpServer(opts: HttpServerOptions, port: number, host: string): Promise<RunningServer> {
  const schema = await getSchema();
  const operations = operationsPlugin({ schema, metrics: opts.metrics, tracing: opts.tracing });
  const site = new StaticSite(opts.siteRoot ?? defaultSiteRoot(), "/console/");
  const format = formatError((err) => opts.log.error({ err, correlationId: operations.correlationOf(err) }, "internal error in a GraphQL operation"));
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
      operations.plugin,
      guardPlugin(schema),
      unavailableStatusPlugin,
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginLandingPageDisabled(),
    ],
  });
  await apollo.start();

  const http = createServer((req, res) => {
    handle(req, res).catch((err) => {
      opts.log.error({ err, correlationId: headerValue(req.headers["x-correlation-id"]) }, "request failed");
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: "internal error", extensions: { code: "INTERNAL_SERVER_ERROR" } }] });
      else res.end();
    });
  });
  http.keepAliveTimeout = 65_000;
  const rest = createRestRouter({
    services: opts.services,
    tokens: opts.tokens,
    log: opts.log,
    auth: opts.restAuth ?? "keystone",
    readBody: (req) => readBody(req, opts.maxBodyBytes),
    maxBodyBytes: opts.maxBodyBytes,
    rateLimit: opts.rateLimit,
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = splitUrl(req.url ?? "/");
    if (url.pathname === "/healthz") return sendJson(res, 200, { status: "ok" });
    if (url.pathname === "/readyz") {
      const r = await opts.ready().catch((err: Error) => ({ ok: false, detail: { error: err.message } }));
      return sendJson(res, r.ok ? 200 : 503, { status: r.ok ? "ready" : "not ready", ...r.detail });
    }
    if (url.pathname === "/metrics" && opts.metrics && !opts.metricsElsewhere) return sendMetrics(opts.metrics, res);
    if (site.serve(req, res, url.pathname)) return;
    for (const route of url.pathname === "/graphql" ? [] : (opts.routes ?? [])) if (await route(req, res, url.pathname, url.search.replace(/^\?/, ""))) return;
    if (url.pathname !== "/graphql" && (await rest(req, res, url.pathname, url.search))) return;
    if (url.pathname !== "/graphql") return sendJson(res, 404, { error: `no route ${url.pathname}; GraphQL is at /graphql, the console at /console` });
    // A browser asking for /graphql gets the GraphQL explorer (GraphiQL, built into dist/console);
    // ?query= fills its editor.
    if (req.method === "GET" && String(req.headers.accept ?? "").includes("text/html")) return site.page(req, res, "graphiql.html");
    const requested = validCorrelationId(headerValue(req.headers["x-correlation-id"]));
    if (!opts.tracing) return graphql(req, res, url, requested);
    // The request's span: with tracing on, a sampled request's correlation id is (without the
    // header) its trace id, and the key its command's and append's spans find their parent by.
    const span = opts.tracing.tracer.startSpan(`${req.method} /graphql`, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method ?? "" } }, opts.tracing.extract(req.headers));
    if (!span.isRecording()) {
      span.end();
      return graphql(req, res, url, requested);
    }
    const correlationId = requested ?? span.spanContext().traceId;
    span.setAttribute(CORRELATION_ATTRIBUTE, correlationId);
    return runInSpan(opts.tracing, correlationId, span, async () => {
      await graphql(req, res, url, correlationId);
      span.setAttribute("http.response.status_code", res.statusCode);
    });
  }

  async function graphql(req: IncomingMessage, res: ServerResponse, url: { search: string }, correlationId: string | undefined) {

    let body: unknown;
    if (req.method === "POST") {
      const raw = await readBody(req, opts.maxBodyBytes);
      if (raw === undefined) {
        res.setHeader("connection", "close");
        return sendJson(res, 413, graphqlError(`request body exceeds ${opts.maxBodyBytes} bytes`, "BAD_REQUEST"));
      }
      try {
        body = raw.length ? JSON.parse(raw) : undefined;
      } catch {
        return sendJson(res, 400, graphqlError("request body is not valid JSON", "BAD_REQUEST"));
      }
      const tooLong = queryTextRefusal((body as { query?: unknown } | undefined)?.query);
      if (tooLong) return sendJson(res, 400, graphqlError(tooLong.message, "QUERY_TOO_COMPLEX"));
    }
    const headers = new HeaderMap();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    const principal = opts.tokens.authenticate(req.headers.authorization);
    const limited = await opts.rateLimit?.take(principal, req.socket.remoteAddress);
    if (limited) {
      res.setHeader("retry-after", String(limited.retryAfterS));
      return sendJson(res, 429, graphqlError(rateLimitedMessage(limited), "RATE_LIMITED", { retryAfterSeconds: limited.retryAfterS }));
    }
    const idempotencyKey = headerValue(req.headers["idempotency-key"]) ?? (body as { extensions?: { idempotencyKey?: unknown } } | undefined)?.extensions?.idempotencyKey;
    const result = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: (req.method ?? "GET").toUpperCase(), headers, search: url.search, body },
      context: async () => createContext(opts.services, principal, correlationId, idempotencyKey),
    });
    for (const [k, v] of result.headers) res.setHeader(k, v);
    res.statusCode = result.status ?? 200;
    if (result.body.kind === "complete") return void res.end(result.body.string);
    for await (const chunk of result.body.asyncIterator) res.write(chunk);
    res.end();
  }

  const wss = new WebSocketServer({ server: http, path: "/graphql", maxPayload: opts.maxBodyBytes });
  const documents = new DocumentCache(schema);
  const ws = useServer<Record<string, unknown> | undefined, { principal?: ReturnType<TokenRegistry["authenticate"]> }>(
    {
      schema,
      // Authenticated once, at connection init, from connectionParams.authorization.
      onConnect: (ctx) => {
        const auth = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const principal = opts.tokens.authenticate(typeof auth === "string" ? auth : undefined);
        if (!principal) return false;
        ctx.extra.principal = principal;
        return true;
      },
      // Parse and validate once per query text, and apply the same guards as HTTP.
      onSubscribe: async (ctx, _id, payload) => {
        const limited = await opts.rateLimit?.take(ctx.extra.principal, ctx.extra.request.socket.remoteAddress);
        if (limited) return [new GraphQLError(rateLimitedMessage(limited), { extensions: { code: "RATE_LIMITED", retryAfterSeconds: limited.retryAfterS } })];
        const doc = documents.get(payload.query);
        if (!("kind" in doc)) return [...doc];
        try {
          checkGuards(schema, doc, payload.operationName, payload.variables);
        } catch (err) {
          return [err as GraphQLError];
        }
        return { schema, document: doc, operationName: payload.operationName, variableValues: payload.variables };
      },
      context: (ctx, _id, payload) => createContext(opts.services, ctx.extra.principal, undefined, payload.extensions?.idempotencyKey),
      // Errors reach WebSocket clients through the same formatter as HTTP's: a stable code, never internal text.
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => format(e.toJSON(), e)),
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: result.errors.map((e) => format(e.toJSON(), e)) } : undefined),
    },
    wss,
  );

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => resolve());
  });
  const addr = http.address() as AddressInfo;
  const shownHost = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shownHost}:${addr.port}/graphql`,
    port: addr.port,
    async close() {
      await ws.dispose();
      await new Promise<void>((r) => wss.close(() => r()));
      const closed = new Promise<void>((r) => http.close(() => r()));
      http.closeIdleConnections();
      const force = setTimeout(() => http.closeAllConnections(), 5_000);
      await closed;
      clearTimeout(force);
      await apollo.stop();
    },
  };
}

/**
 * The request body, or undefined past `limit` bytes (the caller answers 413 and closes the
 * connection; raw-body stops reading what is left of the body).
 */
async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  try {
    return (await getRawBody(req, { limit })).toString("utf8");
  } catch (err) {
    if ((err as { type?: string }).type === "entity.too.large") return undefined;
    throw err;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const s = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(s) });
  res.end(s);
}

/** Path and query of a request target (a WHATWG URL per request costs more than the rest of routing). */
function splitUrl(target: string): { pathname: string; search: string } {
  // Absolute-form targets (from proxies) and dot segments take the full parser.
  if (target[0] !== "/" || target.includes("/.")) return new URL(target, "http://localhost");
  const q = target.indexOf("?");
  return q < 0 ? { pathname: target, search: "" } : { pathname: target.slice(0, q), search: target.slice(q) };
}

const graphqlError = (message: string, code: string, extra: Record<string, unknown> = {}) => ({ errors: [{ message, extensions: { code, ...extra } }] });
const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);


import { ApolloServer, HeaderMap } from "@apollo/server";
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from "@apollo/server/plugin/disabled";
import { GraphQLError } from "graphql";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import getRawBody from "raw-body";
import type { Logger } from "../logger.js";
import type { TokenRegistry } from "./auth/tokens.js";
import { createContext, type ApiContext, type ApiServices } from "./graphql/context.js";
import { formatError, unavailableStatusPlugin } from "./graphql/errors.js";
import { DocumentCache } from "./graphql/document-cache.js";
import { checkGuards, DEFAULT_GUARDS, guardPlugin, queryTextRefusal } from "./graphql/guards.js";
import { getSchema } from "./graphql/schema.js";
import type { RestAuthMode } from "./rest/auth.js";
import { createRestRouter } from "./rest/router.js";
import { rateLimitedMessage, type RateLimit } from "./rate-limit.js";

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
  const format = formatError((err) => opts.log.error({ err }, "internal error in a GraphQL operation"));
  const apollo = new ApolloServer<ApiContext>({
    schema,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    parseOptions: { maxTokens: DEFAULT_GUARDS.maxTokens },
    formatError: format,
    // No cache hints are served, and the cache-control plugin wraps every field resolver to
    // collect them (~2% of the server's CPU under load).
    plugins: [guardPlugin(schema), unavailableStatusPlugin, ApolloServerPluginCacheControlDisabled(), ApolloServerPluginInlineTraceDisabled()],
  });
  await apollo.start();

  const http = createServer((req, res) => {
    handle(req, res).catch((err) => {
      opts.log.error({ err }, "request failed");
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
    for (const route of url.pathname === "/graphql" ? [] : (opts.routes ?? [])) if (await route(req, res, url.pathname, url.search.replace(/^\?/, ""))) return;
    if (url.pathname !== "/graphql" && (await rest(req, res, url.pathname, url.search))) return;
    if (url.pathname !== "/graphql") return sendJson(res, 404, { error: `no route ${url.pathname}; GraphQL is at /graphql` });

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
    const correlationId = headerValue(req.headers["x-correlation-id"]);
    const result = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: (req.method ?? "GET").toUpperCase(), headers, search: url.search, body },
      context: async () => createContext(opts.services, principal, correlationId),
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
      context: (ctx) => createContext(opts.services, ctx.extra.principal),
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


/**
 * GraphQL over HTTP at /graphql, with no framework (it halved the cost per request here): the body
 * and query-text guards before parsing, the rate limit, and the request's span when tracing is on;
 * then the common POST runs directly (graphql/direct-operation.ts), and anything else through
 * Apollo's executeHTTPGraphQLRequest.
 */
import { ApolloServer, HeaderMap } from "@apollo/server";
import type { IncomingMessage, ServerResponse } from "node:http";
import { CORRELATION_ATTRIBUTE, run as runInSpan, SpanKind, type Tracing } from "../observability/tracing.js";
import type { TokenRegistry } from "./auth/tokens.js";
import { createContext, type ApiContext } from "./graphql/context.js";
import { directOperation, type DirectOperations } from "./graphql/direct-operation.js";
import { validCorrelationId, type ApiServices } from "./services.js";
import { queryTextRefusal } from "./graphql/guards.js";
import { graphqlError, headerValue, readBody, sendJson } from "./http-util.js";
import { rateLimitedMessage, type RateLimit } from "./rate-limit.js";

export interface GraphqlHttpOptions {
  apollo: ApolloServer<ApiContext>;
  /** Runs the common POST without Apollo's pipeline; absent, Apollo answers every request. */
  direct?: DirectOperations;
  services: ApiServices;
  tokens: TokenRegistry;
  maxBodyBytes: number;
  rateLimit?: RateLimit;
  tracing?: Tracing;
}

export type GraphqlHandler = (req: IncomingMessage, res: ServerResponse, search: string) => Promise<void>;

export function graphqlOverHttp(o: GraphqlHttpOptions): GraphqlHandler {
  const answer = (req: IncomingMessage, res: ServerResponse, search: string, correlationId: string | undefined) => execute(o, req, res, search, correlationId);
  return async (req, res, search) => {
    const requested = validCorrelationId(headerValue(req.headers["x-correlation-id"]));
    if (!o.tracing) return answer(req, res, search, requested);
    // The request's span: with tracing on, a sampled request's correlation id is (without the
    // header) its trace id, and the key its command's and append's spans find their parent by.
    const span = o.tracing.tracer.startSpan(`${req.method} /graphql`, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method ?? "" } }, o.tracing.extract(req.headers));
    if (!span.isRecording()) {
      span.end();
      return answer(req, res, search, requested);
    }
    const correlationId = requested ?? span.spanContext().traceId;
    span.setAttribute(CORRELATION_ATTRIBUTE, correlationId);
    return runInSpan(o.tracing, correlationId, span, async () => {
      await answer(req, res, search, correlationId);
      span.setAttribute("http.response.status_code", res.statusCode);
    });
  };
}

/** The POST body as JSON, or the answer already sent (413, 400) and undefined. */
async function postedBody(o: GraphqlHttpOptions, req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | undefined> {
  const raw = await readBody(req, o.maxBodyBytes);
  if (raw === undefined) {
    res.setHeader("connection", "close");
    return void sendJson(res, 413, graphqlError(`request body exceeds ${o.maxBodyBytes} bytes`, "BAD_REQUEST"));
  }
  let body: unknown;
  try {
    body = raw.length ? JSON.parse(raw) : undefined;
  } catch {
    return void sendJson(res, 400, graphqlError("request body is not valid JSON", "BAD_REQUEST"));
  }
  const tooLong = queryTextRefusal((body as { query?: unknown } | undefined)?.query);
  if (tooLong) return void sendJson(res, 400, graphqlError(tooLong.message, "QUERY_TOO_COMPLEX"));
  return { body };
}

const UNKNOWN_TOKEN =
  "the Authorization header holds no token this service knows: send `Authorization: Bearer <token>` with a token from the service's token file " +
  "(AUTH_TOKENS_FILE, or tokens.json in DATA_DIR), not one of another deployment";

async function execute(o: GraphqlHttpOptions, req: IncomingMessage, res: ServerResponse, search: string, correlationId: string | undefined): Promise<void> {
  let body: unknown;
  if (req.method === "POST") {
    const posted = await postedBody(o, req, res);
    if (!posted) return;
    body = posted.body;
  }
  const principal = o.tokens.authenticate(req.headers.authorization);
  const limited = await o.rateLimit?.take(principal, req.socket.remoteAddress);
  if (limited) {
    return sendJson(res, 429, graphqlError(rateLimitedMessage(limited), "RATE_LIMITED", { retryAfterSeconds: limited.retryAfterS }), { "retry-after": String(limited.retryAfterS) });
  }
  // A token that is sent but not known is refused before the operation runs, as HTTP says: 401.
  if (!principal && req.headers.authorization) {
    return sendJson(res, 401, graphqlError(UNKNOWN_TOKEN, "UNAUTHENTICATED"), { "www-authenticate": 'Bearer realm="cyborg-es", error="invalid_token"' });
  }
  const idempotencyKey = headerValue(req.headers["idempotency-key"]) ?? (body as { extensions?: { idempotencyKey?: unknown } } | undefined)?.extensions?.idempotencyKey;
  const context = () => createContext(o.services, principal, correlationId, idempotencyKey);
  if (o.direct && req.method === "POST") {
    const direct = await directOperation(o.direct, { contentType: req.headers["content-type"], accept: headerValue(req.headers.accept), body }, context);
    if (direct) {
      for (const [k, v] of direct.headers) res.setHeader(k, v);
      res.statusCode = direct.status;
      return void res.end(direct.body);
    }
  }
  const headers = new HeaderMap();
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
  const result = await o.apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: (req.method ?? "GET").toUpperCase(), headers, search, body },
    context: async () => context(),
  });
  for (const [k, v] of result.headers) res.setHeader(k, v);
  res.statusCode = result.status ?? 200;
  if (result.body.kind === "complete") return void res.end(result.body.string);
  for await (const chunk of result.body.asyncIterator) res.write(chunk);
  res.end();
}

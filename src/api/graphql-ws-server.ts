/**
 * GraphQL over WebSocket (graphql-ws) on the HTTP server's /graphql: authenticated once at
 * connection init, each subscribe message parsed once per query text, guarded and rate limited
 * as HTTP is, and capped per token (connections and subscriptions, socket-quota.ts).
 */
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from "graphql";
import type { Server } from "node:http";
import { WebSocketServer } from "ws";
import type { Logger } from "../infra/logger.js";
import type { Principal, TokenRegistry } from "./auth/tokens.js";
import { createContext } from "./graphql/context.js";
import type { ApiServices } from "./services.js";
import { DocumentCache } from "./graphql/document-cache.js";
import { checkGuards } from "./graphql/guards.js";
import { rateLimitedMessage, type RateLimit } from "./rate-limit.js";
import { isRefusal, TOO_MANY_CONNECTIONS_CLOSE, type SocketQuota } from "./socket-quota.js";
import { serveGraphqlWs } from "./ws-transport.js";

export interface GraphqlWsOptions {
  http: Server;
  schema: GraphQLSchema;
  services: ApiServices;
  tokens: TokenRegistry;
  log: Logger;
  maxPayload: number;
  rateLimit?: RateLimit;
  quota?: SocketQuota;
  /** The formatter HTTP answers use: a stable code, never internal text. */
  format(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
  /** Parsed and validated query texts, shared with GraphQL over HTTP. */
  documents?: DocumentCache;
}

/** What a connection counts against its token: the releases of the connection and its subscriptions. */
interface Held {
  connection?: { release(): void };
  subscriptions: Map<string, { release(): void }>;
}

export function startGraphqlWs(o: GraphqlWsOptions): { close(): Promise<void> } {
  const wss = new WebSocketServer({ server: o.http, path: "/graphql", maxPayload: o.maxPayload });
  const documents = o.documents ?? new DocumentCache(o.schema);
  const held = new WeakMap<object, Held>();
  const heldBy = (extra: object): Held => {
    let h = held.get(extra);
    if (!h) held.set(extra, (h = { subscriptions: new Map() }));
    return h;
  };
  const ws = serveGraphqlWs<Record<string, unknown> | undefined, { principal?: Principal }>(
    {
      schema: o.schema,
      onConnect: (ctx) => {
        const auth = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const principal = o.tokens.authenticate(typeof auth === "string" ? auth : undefined);
        if (!principal) return false;
        const connection = o.quota?.openConnection(principal);
        if (connection && isRefusal(connection)) {
          ctx.extra.socket.close(TOO_MANY_CONNECTIONS_CLOSE, `${connection.code}: ${connection.message}`.slice(0, 123));
          return false;
        }
        ctx.extra.principal = principal;
        heldBy(ctx.extra).connection = connection;
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const limited = await o.rateLimit?.take(ctx.extra.principal, ctx.extra.request.socket.remoteAddress);
        if (limited) return [new GraphQLError(rateLimitedMessage(limited), { extensions: { code: "RATE_LIMITED", retryAfterSeconds: limited.retryAfterS } })];
        const doc = documents.get(payload.query);
        if (!("kind" in doc)) return [...doc];
        try {
          checkGuards(o.schema, doc, payload.operationName, payload.variables);
        } catch (err) {
          return [err as GraphQLError];
        }
        const h = heldBy(ctx.extra);
        const counted = ctx.extra.principal ? o.quota?.openSubscription(ctx.extra.principal) : undefined;
        if (counted && isRefusal(counted)) return [new GraphQLError(counted.message, { extensions: { code: counted.code, limit: counted.limit } })];
        if (counted) h.subscriptions.set(id, counted);
        return { schema: o.schema, document: doc, operationName: payload.operationName, variableValues: payload.variables };
      },
      context: (ctx, _id, payload) => createContext(o.services, ctx.extra.principal, undefined, payload.extensions?.idempotencyKey),
      onComplete: (ctx, id) => release(heldBy(ctx.extra), id),
      onClose: (ctx) => {
        const h = heldBy(ctx.extra);
        for (const id of [...h.subscriptions.keys()]) release(h, id);
        h.connection?.release();
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => o.format(e.toJSON(), e)),
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: result.errors.map((e) => o.format(e.toJSON(), e)) } : undefined),
    },
    wss,
    o.log,
  );
  return { close: () => ws.dispose() };
}

function release(h: Held, id: string): void {
  h.subscriptions.get(id)?.release();
  h.subscriptions.delete(id);
}

/**
 * The agent's request worker: it keeps a GraphQL subscription open for its host
 * (`agentRequests(hostname)`; the service sends the requests in flight on every (re)connect, then
 * each new one) and hands each request to the handler of its kind (program a region, clean a
 * device, ...). Requests of one lane (a region, a device) run one after another, in the order they
 * came; a request already taken is not run again when it is sent again after a reconnect.
 */
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import type { Logger } from "../../infra/logger.js";
import type { GraphQLClientOptions } from "./graphql-client.js";

/** One kind of request the agent takes. */
export interface AgentRequestHandler<P = any> {
  /** The AgentRequestKind it takes, e.g. "PROGRAM". */
  kind: string;
  /** The AgentRequest field that holds this kind's request, e.g. "program". */
  field: string;
  /** The GraphQL selection of that field's object, e.g. "requestId deployableUuid ...". */
  selection: string;
  /** Requests of one lane run one at a time: a region, a device. */
  lane(payload: P): string;
  /** Runs the request and reports its outcome; it should not throw (a throw is logged). */
  handle(payload: P): Promise<unknown>;
  /** Called once the worker stopped and its requests settled (temporary files and the like). */
  close?(): Promise<void>;
}

export interface AgentRequestsOptions {
  client: GraphQLClientOptions;
  hostname: string;
  log: Logger;
  handlers: readonly AgentRequestHandler[];
}

/** How many request ids the worker remembers as taken (a reconnect resends only those in flight). */
const REMEMBERED = 10_000;

export function subscriptionQuery(handlers: readonly AgentRequestHandler[]): string {
  const fields = handlers.map((h) => `${h.field} { ${h.selection} }`).join("\n    ");
  return `subscription Requests($hostname: String!) {
  agentRequests(hostname: $hostname) {
    kind requestId hostname
    ${fields}
  }
}`;
}

/** Takes the host's requests until the signal aborts; reconnects (with backoff) whenever the service goes away. */
export async function runAgentRequests(opts: AgentRequestsOptions, signal: AbortSignal): Promise<void> {
  const dispatcher = new RequestDispatcher(opts);
  const client = connect(opts);
  let unsubscribe = () => undefined as void;
  let ended = () => undefined as void;
  signal.addEventListener(
    "abort",
    () => {
      unsubscribe();
      ended();
      void client.dispose();
    },
    { once: true },
  );
  const query = subscriptionQuery(opts.handlers);
  while (!signal.aborted) {
    await new Promise<void>((resolve) => {
      ended = resolve;
      unsubscribe = client.subscribe<{ agentRequests: Record<string, unknown> }>(
        { query, variables: { hostname: opts.hostname } },
        {
          next: ({ data, errors }) => {
            if (errors?.length) opts.log.error({ errors }, "agent requests refused");
            if (data?.agentRequests) dispatcher.take(data.agentRequests);
          },
          error: (err) => {
            if (!signal.aborted) opts.log.warn({ error: String((err as Error)?.message ?? err) }, "agent requests subscription ended; subscribing again");
            resolve();
          },
          complete: () => resolve(),
        },
      );
    });
    if (!signal.aborted) await new Promise((r) => setTimeout(r, 1000));
  }
  await dispatcher.settled();
  for (const h of opts.handlers) await h.close?.().catch((err: Error) => opts.log.warn({ err: err.message, kind: h.kind }, "a request handler did not close cleanly"));
}

/** Hands requests to their kind's handler: once each, one at a time per lane. */
export class RequestDispatcher {
  private readonly taken = new Set<string>();
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly byKind: Map<string, AgentRequestHandler>;

  constructor(private readonly opts: Pick<AgentRequestsOptions, "handlers" | "log">) {
    this.byKind = new Map(opts.handlers.map((h) => [h.kind, h]));
  }

  /** One AgentRequest as the subscription sent it. */
  take(message: Record<string, unknown>): void {
    const { kind, requestId } = message as { kind: string; requestId: string };
    if (this.taken.has(requestId)) return;
    this.taken.add(requestId);
    if (this.taken.size > REMEMBERED) this.taken.delete(this.taken.values().next().value!);
    const handler = this.byKind.get(kind);
    const payload = handler ? message[handler.field] : undefined;
    if (!handler || !payload) {
      this.opts.log.warn({ request: requestId, kind }, `a ${kind} request this agent does not take (its handlers: ${[...this.byKind.keys()].join(", ") || "none"}); left to time out on the service`);
      return;
    }
    const lane = `${kind}:${handler.lane(payload)}`;
    const previous = this.lanes.get(lane) ?? Promise.resolve();
    const next = previous
      .then(() => handler.handle(payload))
      .then(() => undefined)
      .catch((err) => this.opts.log.error({ err, request: requestId, kind }, "agent request failed"));
    this.lanes.set(lane, next);
    void next.finally(() => this.lanes.get(lane) === next && this.lanes.delete(lane));
  }

  /** Resolves when every request taken so far has run. */
  async settled(): Promise<void> {
    while (this.lanes.size) await Promise.allSettled([...this.lanes.values()]);
  }
}

function connect(opts: AgentRequestsOptions): Client {
  return createClient({
    url: opts.client.url.replace(/^http/, "ws"),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${opts.client.token}` },
    lazy: true,
    keepAlive: 10_000,
    retryAttempts: Number.MAX_SAFE_INTEGER,
    shouldRetry: () => true,
    retryWait: (n) => new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** Math.min(n, 5)) * (0.5 + Math.random() / 2))),
    on: { connected: () => opts.log.info({ hostname: opts.hostname, kinds: opts.handlers.map((h) => h.kind) }, "listening for agent requests") },
  });
}

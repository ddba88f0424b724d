/** os-acc's link to the service: GraphQL over HTTP (kept-alive connections), and the acceleratorRequestBound subscription over WebSocket. */
import { createClient, type Client } from "graphql-ws";
import pRetry, { AbortError } from "p-retry";
import WebSocket from "ws";
import { fromServiceError, ServiceError } from "./errors.js";
import { JsonPoster, type PostAnswer } from "./post-json.js";

export interface TransportOptions {
  /** The service's GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  url: string;
  /** A service token (the compute service's). */
  token: string;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
  /** Retries of a keyed mutation whose answer was lost (no answer, 5xx, UNAVAILABLE); default 3. */
  retries?: number;
}

/** Answers after which the same request may succeed: no answer, a server error, a read store rebuilding. */
const RETRYABLE = new Set(["SERVICE_UNAVAILABLE", "UNAVAILABLE"]);

interface GraphQLAnswer<T> {
  data?: T;
  errors?: Array<{ message: string; extensions?: { code?: string; field?: string } }>;
}

export class Transport {
  private ws?: Client;
  private readonly http: JsonPoster;

  constructor(private readonly o: TransportOptions) {
    this.http = new JsonPoster(o.url);
  }

  /**
   * One operation. A mutation sent with an idempotency key is retried when its answer was lost
   * (always under the same key: the service applies it once and answers each retry the same).
   */
  async request<T>(query: string, variables: Record<string, unknown> = {}, idempotencyKey?: string): Promise<T> {
    if (!idempotencyKey) return this.once<T>(query, variables);
    return pRetry(
      async () => {
        try {
          return await this.once<T>(query, variables, idempotencyKey);
        } catch (err) {
          throw err instanceof ServiceError && RETRYABLE.has(err.code) ? err : new AbortError(err as Error);
        }
      },
      { retries: this.o.retries ?? 3, minTimeout: 200, maxTimeout: 2000, randomize: true },
    );
  }

  private async once<T>(query: string, variables: Record<string, unknown>, idempotencyKey?: string): Promise<T> {
    const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${this.o.token}` };
    if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
    let res: PostAnswer;
    try {
      res = await this.http.post(JSON.stringify({ query, variables }), headers, this.o.timeoutMs ?? 30_000);
    } catch (err) {
      throw new ServiceError("SERVICE_UNAVAILABLE", `cannot reach ${this.o.url}: ${(err as Error).message}`);
    }
    let body: GraphQLAnswer<T>;
    try {
      body = JSON.parse(res.text) as GraphQLAnswer<T>;
    } catch {
      throw new ServiceError("SERVICE_UNAVAILABLE", `${this.o.url} answered HTTP ${res.status} with a body that is not JSON`);
    }
    const first = body.errors?.[0];
    if (first) throw fromServiceError(first.extensions?.code, first.message, first.extensions?.field);
    if (res.status < 200 || res.status > 299 || body.data === undefined) throw new ServiceError("SERVICE_UNAVAILABLE", `${this.o.url} answered HTTP ${res.status}`);
    return body.data;
  }

  /**
   * Subscribes and resolves once the subscription is set up; `next` gets each event. The service
   * sends binds that resolved before the subscription too, so nothing is missed.
   */
  subscribe<T>(query: string, variables: Record<string, unknown>, next: (data: T) => void, error: (err: Error) => void): () => void {
    this.ws ??= createClient({
      url: this.o.url.replace(/^http/, "ws"),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${this.o.token}` },
      retryAttempts: 3,
      // One connection for the plugs of a compute node, opened at the first plug and kept until
      // close(), not one per plug (the default): each new one is a TCP connect, an upgrade and an
      // authenticated init, three round trips before the bind can go. A failure of the connection
      // reaches the subscriptions open on it; none is waiting otherwise.
      lazy: false,
      onNonLazyError: () => undefined,
    });
    return this.ws.subscribe<T>(
      { query, variables },
      {
        next: (v) => {
          const first = v.errors?.[0];
          if (first) error(fromServiceError(first.extensions?.code as string | undefined, first.message));
          else if (v.data) next(v.data as T);
        },
        error: (e) => error(e instanceof Error ? e : new ServiceError("SERVICE_UNAVAILABLE", `subscription failed: ${JSON.stringify(e)}`)),
        complete: () => undefined,
      },
    );
  }

  async close(): Promise<void> {
    this.http.close();
    await this.ws?.dispose();
    this.ws = undefined;
  }
}

/** os-acc's link to the service: GraphQL over HTTP, and the acceleratorRequestBound subscription over WebSocket. */
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { fromServiceError, ServiceError } from "./errors.js";

export interface TransportOptions {
  /** The service's GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  url: string;
  /** A service token (the compute service's). */
  token: string;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
}

interface GraphQLAnswer<T> {
  data?: T;
  errors?: Array<{ message: string; extensions?: { code?: string; field?: string } }>;
}

export class Transport {
  private ws?: Client;

  constructor(private readonly o: TransportOptions) {}

  async request<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.o.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${this.o.token}` },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new ServiceError("SERVICE_UNAVAILABLE", `cannot reach ${this.o.url}: ${(err as Error).cause ?? (err as Error).message}`);
    }
    let body: GraphQLAnswer<T>;
    try {
      body = (await res.json()) as GraphQLAnswer<T>;
    } catch {
      throw new ServiceError("SERVICE_UNAVAILABLE", `${this.o.url} answered HTTP ${res.status} with a body that is not JSON`);
    }
    const first = body.errors?.[0];
    if (first) throw fromServiceError(first.extensions?.code, first.message, first.extensions?.field);
    if (!res.ok || body.data === undefined) throw new ServiceError("SERVICE_UNAVAILABLE", `${this.o.url} answered HTTP ${res.status}`);
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
    await this.ws?.dispose();
    this.ws = undefined;
  }
}

import http from "node:http";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";

/**
 * A minimal GraphQL client for benchmarks: node:http with a keep-alive connection, and one
 * graphql-ws connection. (fetch costs ~3x more CPU per request here, which would measure the
 * load generator instead of the server.)
 */
export class BenchClient {
  readonly ws: Client;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly target: URL;
  constructor(readonly url: string, readonly token: string) {
    this.target = new URL(url);
    this.ws = createClient({
      url: url.replace(/^http/, "ws"),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
      keepAlive: 10_000,
      // One long-lived connection per client, as a compute scheduler keeps (a lazy client would
      // reconnect for every flow).
      lazy: false,
    });
  }

  async gql<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const text = await this.post(JSON.stringify({ query, variables }));
    const body = JSON.parse(text) as { data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> };
    if (body.errors?.length) {
      const e = body.errors[0]!;
      throw new Error(`${e.extensions?.code ?? "ERROR"}: ${e.message}`);
    }
    return body.data as T;
  }

  /** Subscribe; resolves the first `n` payloads (or rejects after timeoutMs). `ready` resolves on the ack. */
  waitFor<T>(query: string, variables: Record<string, unknown>, n: number, timeoutMs = 30_000) {
    const got: T[] = [];
    let dispose: () => void = () => undefined;
    const done = new Promise<T[]>((resolve, reject) => {
      const timer = setTimeout(() => (dispose(), reject(new Error(`timed out after ${timeoutMs} ms waiting for ${n} events`))), timeoutMs);
      dispose = this.ws.subscribe<T>(
        { query, variables },
        {
          next: (v) => {
            if (v.errors?.length) return reject(new Error(JSON.stringify(v.errors)));
            got.push(v.data as T);
            if (got.length >= n) {
              clearTimeout(timer);
              dispose();
              resolve(got);
            }
          },
          error: (e) => (clearTimeout(timer), reject(e instanceof Error ? e : new Error(JSON.stringify(e)))),
          complete: () => undefined,
        },
      );
    });
    return done;
  }

  private post(payload: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.target.hostname,
          port: this.target.port,
          path: this.target.pathname,
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", authorization: `Bearer ${this.token}`, "content-length": Buffer.byteLength(payload) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  close(): Promise<void> {
    this.agent.destroy();
    return this.ws.dispose() as Promise<void>;
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function parseArgs(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) continue;
    const [k, v] = a.slice(2).split("=", 2);
    if (v !== undefined) out[k!] = v;
    else if (argv[i + 1] && !argv[i + 1]!.startsWith("--")) out[k!] = argv[++i]!;
    else out[k!] = "true";
  }
  return out;
}

/**
 * POST of a JSON body on kept-alive connections (node:http or node:https by the URL), with a
 * deadline for the whole answer. os-acc sends a few small requests per plug: fetch (undici and
 * web streams, an AbortSignal per request) cost about 2 ms of CPU each on a compute node; this
 * costs a fraction of that.
 */
import http from "node:http";
import https from "node:https";

export interface PostAnswer {
  status: number;
  text: string;
}

/** Idle connections are closed after this long (well before the service's 65 s keep-alive). */
const IDLE_MS = 30_000;

export class JsonPoster {
  private readonly target: URL;
  private readonly client: typeof http | typeof https;
  private readonly agent: http.Agent;

  constructor(url: string) {
    this.target = new URL(url);
    this.client = this.target.protocol === "https:" ? https : http;
    this.agent = new this.client.Agent({ keepAlive: true, timeout: IDLE_MS });
  }

  /** Rejects when there is no connection, or no whole answer within `timeoutMs`. */
  post(body: string, headers: Record<string, string>, timeoutMs: number): Promise<PostAnswer> {
    return new Promise((resolve, reject) => {
      const req = this.client.request(
        this.target,
        { method: "POST", agent: this.agent, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            clearTimeout(deadline);
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
          });
          res.on("error", fail);
        },
      );
      const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      function fail(err: Error) {
        clearTimeout(deadline);
        reject(err);
      }
      req.on("error", fail);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

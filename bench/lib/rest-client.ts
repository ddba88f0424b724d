import http from "node:http";

export interface RestAnswer {
  status: number;
  body: any;
}

/**
 * A minimal client for the REST API in benchmarks: node:http, one keep-alive connection, the
 * token as X-Auth-Token (what a compute scheduler's client keeps per worker).
 */
export class RestBenchClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly target: URL;
  constructor(baseUrl: string, private readonly token: string) {
    this.target = new URL(baseUrl);
  }

  request(method: string, path: string, body?: unknown): Promise<RestAnswer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { "x-auth-token": this.token, "openstack-api-version": "accelerator 2.0" };
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = Buffer.byteLength(payload);
    }
    return new Promise((resolve, reject) => {
      const req = http.request({ host: this.target.hostname, port: this.target.port, path, method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** The request, or an error naming the status and Cyborg's faultstring. */
  async expect(status: number, method: string, path: string, body?: unknown): Promise<any> {
    const r = await this.request(method, path, body);
    if (r.status !== status) {
      const fault = typeof r.body?.error_message === "string" ? JSON.parse(r.body.error_message).faultstring : JSON.stringify(r.body);
      throw new Error(`${method} ${path.split("?")[0]}: ${r.status} ${fault ?? ""}`);
    }
    return r.body;
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * The fleet's agents: each simulated host reports through the agent's own report protocol
 * (src/clients/agent/report-protocol.ts: confirm the digest, send the whole report when the
 * server does not know it), with its own agent token, every interval with jitter, over one
 * keep-alive HTTP pool (node:http: fetch would cost the load generator ~3x the CPU).
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import { sendReport, type PostGraphQL } from "../../../src/clients/agent/report-protocol.js";
import type { SimulatedHost } from "./host-devices.js";

export interface ReportSample {
  at: number;
  ms: number;
  /** The whole report went (registration or churn), not only the digest. */
  full: boolean;
}

export interface AgentStats {
  samples: ReportSample[];
  failed: number;
  failures: string[];
  inFlight: number;
}

export function httpPoster(url: string): (token: string) => PostGraphQL {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 512 });
  return (token) =>
    <T>(query: string, variables: Record<string, unknown>, idempotencyKey?: string) =>
      new Promise<T>((resolve, reject) => {
        const payload = JSON.stringify({ query, variables });
        const headers: Record<string, string | number> = { "content-type": "application/json", authorization: `Bearer ${token}`, "content-length": Buffer.byteLength(payload) };
        if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
        const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: "POST", agent, headers, timeout: 30_000 }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            try {
              const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> };
              const e = body.errors?.[0];
              if (e) reject(new Error(`HTTP ${res.statusCode} ${e.extensions?.code ?? "ERROR"}: ${e.message}`));
              else if (body.data === undefined) reject(new Error(`HTTP ${res.statusCode} without data`));
              else resolve(body.data);
            } catch (err) {
              reject(new Error(`HTTP ${res.statusCode}: ${(err as Error).message}`));
            }
          });
        });
        req.on("timeout", () => req.destroy(new Error("no answer within 30 s")));
        req.on("error", reject);
        req.end(payload);
      });
}

export interface FleetOptions {
  hosts: SimulatedHost[];
  post: (token: string) => PostGraphQL;
  intervalMs: number;
  /** The first reports (registration) are spread over this long. */
  registerMs: number;
  /** Each interval is stretched or shrunk by up to this fraction at random. */
  jitter: number;
  /** Hosts whose devices change in each interval. */
  churn: number;
  random: () => number;
}

/** Runs every host's report loop until stop(); the first reports are spread over `registerMs`. */
export class Fleet {
  readonly stats: AgentStats = { samples: [], failed: 0, failures: [], inFlight: 0 };
  readonly churned: Record<string, number> = {};
  /** Hosts with at least one report taken. */
  readonly registered = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private idle: (() => void) | undefined;

  constructor(private readonly o: FleetOptions) {}

  start(): void {
    for (const host of this.o.hosts) this.later(host, this.o.random() * this.o.registerMs);
    const churnTimer = setInterval(() => this.churn(), this.o.intervalMs);
    this.timers.add(churnTimer);
  }

  /** Stops scheduling; resolves when the reports in flight have answered. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    if (this.stats.inFlight > 0) await new Promise<void>((r) => (this.idle = r));
  }

  private churn(): void {
    const n = Math.round(this.o.hosts.length * this.o.churn);
    for (let k = 0; k < n; k++) {
      const host = this.o.hosts[Math.floor(this.o.random() * this.o.hosts.length)]!;
      const kind = host.churn(this.o.random);
      this.churned[kind] = (this.churned[kind] ?? 0) + 1;
    }
  }

  private later(host: SimulatedHost, ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      void this.report(host);
    }, ms);
    this.timers.add(t);
  }

  private async report(host: SimulatedHost): Promise<void> {
    const s = this.stats;
    s.inFlight++;
    const t0 = performance.now();
    try {
      const r = await sendReport(this.o.post(host.token), host.hostname, host.report(), randomUUID());
      s.samples.push({ at: Date.now(), ms: performance.now() - t0, full: !r.confirmed });
      this.registered.add(host.hostname);
    } catch (err) {
      s.failed++;
      if (s.failures.length < 10) s.failures.push(`${host.hostname}: ${(err as Error).message}`);
    } finally {
      s.inFlight--;
      if (this.stopped && s.inFlight === 0) this.idle?.();
    }
    this.later(host, this.o.intervalMs * (1 + (this.o.random() * 2 - 1) * this.o.jitter));
  }
}

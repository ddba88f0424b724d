/**
 * Starts the whole service in-process on a free port (embedded by default, or on a real Redis),
 * with a token per role, and talks to it as clients do: GraphQL over HTTP, graphql-ws over WebSocket.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { TokenRegistry, type Role } from "../../src/api/auth/tokens.js";
import { loadConfig } from "../../src/infra/config.js";
import { createLogger, type Logger } from "../../src/infra/logger.js";
import { startService, type Service, type ServiceOverrides } from "../../src/service/main.js";

export const TOKENS = {
  admin: { token: "admin-token-0123456789", roles: ["admin"], projectId: "p-admin" },
  manager: { token: "manager-token-0123456789", roles: ["manager"], projectId: "p1" },
  member: { token: "member-token-0123456789", roles: ["member"], projectId: "p1" },
  member2: { token: "member2-token-0123456789", roles: ["member"], projectId: "p2" },
  reader: { token: "reader-token-0123456789", roles: ["reader"], projectId: "p1" },
  service: { token: "service-token-0123456789", roles: ["service"], projectId: "service" },
  agent: { token: "agent-token-compute1-0123", roles: ["agent"], projectId: null, hostname: "compute1" },
} satisfies Record<string, { token: string; roles: Role[]; projectId: string | null; hostname?: string }>;
export type Who = keyof typeof TOKENS;

export interface GqlResult<T = any> {
  data?: T;
  errors?: Array<{ message: string; extensions?: { code?: string; field?: string } }>;
}

export interface TestService {
  service: Service;
  url: string;
  /** The service's DATA_DIR (the embedded event log lives in its `events` folder). */
  dataDir: string;
  gql<T = any>(who: Who | null, query: string, variables?: Record<string, unknown>): Promise<GqlResult<T>>;
  /** Like gql, but throws on errors and returns data. */
  ok<T = any>(who: Who | null, query: string, variables?: Record<string, unknown>): Promise<T>;
  ws(who: Who | null): Client;
  close(): Promise<void>;
}

export async function startTestService(
  /** dataDir: the caller's (kept on close, for a restart); otherwise a temporary one, removed on close. log: silent unless given. */
  opts: { env?: Record<string, string>; overrides?: ServiceOverrides; dataDir?: string; log?: Logger } = {},
): Promise<TestService> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "cyborg-es-api-"));
  const config = loadConfig({ PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent", ...opts.env });
  const tokens = new TokenRegistry(Object.entries(TOKENS).map(([name, t]) => ({ name, ...t })) as never);
  const service = await startService(config, opts.log ?? createLogger("silent"), { tokens, ...opts.overrides });
  const url = service.url!;
  const clients: Client[] = [];

  const gql = async (who: Who | null, query: string, variables: Record<string, unknown> = {}) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (who) headers.authorization = `Bearer ${TOKENS[who].token}`;
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
    return (await res.json()) as GqlResult;
  };
  return {
    service,
    url,
    dataDir,
    gql,
    async ok(who, query, variables) {
      const r = await gql(who, query, variables);
      if (r.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(r.errors)}`);
      return r.data as never;
    },
    ws(who) {
      const c = createClient({
        url: url.replace(/^http/, "ws"),
        webSocketImpl: WebSocket,
        connectionParams: who ? { authorization: `Bearer ${TOKENS[who].token}` } : {},
        retryAttempts: 0,
        lazy: true,
      });
      clients.push(c);
      return c;
    },
    async close() {
      for (const c of clients) await c.dispose();
      await service.close();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Subscribe and collect events; `next(n)` waits until n have arrived (bounded by a generous timeout). */
export function collect<T>(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const events: T[] = [];
  const errors: unknown[] = [];
  let waiters: Array<() => void> = [];
  const unsubscribe = client.subscribe<T>(
    { query, variables },
    {
      next: (v) => {
        if (v.errors) errors.push(...v.errors);
        if (v.data) events.push(v.data as T);
        const w = waiters;
        waiters = [];
        w.forEach((f) => f());
      },
      error: (e) => {
        errors.push(e);
        const w = waiters;
        waiters = [];
        w.forEach((f) => f());
      },
      complete: () => undefined,
    },
  );
  return {
    events,
    errors,
    unsubscribe,
    async next(n: number, timeoutMs = 15_000): Promise<T[]> {
      const deadline = Date.now() + timeoutMs;
      while (events.length < n && errors.length === 0) {
        if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${n} events, got ${events.length}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
      if (errors.length) throw new Error(`subscription error: ${JSON.stringify(errors)}`);
      return events.slice(0, n);
    },
  };
}

/** The fake driver's one FPGA, as host `hostname` reports it (its deployable is named for the host). */
export const FAKE_HOST_DEVICES = (handles = 4, hostname = "compute1") => [
  {
    type: "FPGA",
    vendor: "0xABCD",
    model: "miss model info",
    controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
    deployables: [
      {
        name: `${hostname}_FakeDevice`,
        numAccelerators: handles,
        driverName: "fake",
        attributes: [
          { key: "rc", value: "FPGA" },
          { key: "trait0", value: "CUSTOM_FAKE_DEVICE" },
        ],
        attachHandles: Array.from({ length: handles }, (_, i) => ({
          type: "TEST_PCI",
          info: { domain: "0000", bus: "0c", device: "0" + (i >> 3), function: String(i & 7) },
        })),
      },
    ],
  },
];

/**
 * A Nova stand-in for benchmarks and tests (test/support/nova.ts re-exports it): an HTTP server
 * that answers POST /v2.1/os-server-external-events as Nova's server_external_events.py does and
 * records every call. It can be told to fail and recover: go down (connections refused), answer
 * every request with one status (500, 401, ...), or answer per event 404 (the instance does not
 * exist) or 422 (not on a host yet) for chosen instances.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export interface StandInEvent {
  name: string;
  server_uuid: string;
  tag?: string;
  status?: string;
}

export interface NovaCall {
  /** performance.now() when the request was read. */
  at: number;
  headers: Record<string, string | undefined>;
  events: StandInEvent[];
  /** The HTTP status answered, and the code of each event (200, 404, 422; none when the whole request failed). */
  status: number;
  codes: number[];
}

export interface NovaStandIn {
  /** The compute endpoint, as NOVA_URL: http://127.0.0.1:<port>/v2.1 */
  url: string;
  token: string;
  calls: NovaCall[];
  /** The events answered 200, in the order received. */
  accepted(): StandInEvent[];
  /** Answer every request with this status (e.g. 500, 401, 403); null: answer as Nova. */
  failWith(status: number | null): void;
  /** Instances that do not exist (per-event 404). */
  gone: Set<string>;
  /** Instances not on a host yet (per-event 422). */
  noHost: Set<string>;
  /** Answer a request whose instances are all gone with a whole-request 404, as Nova before 2024.1 did (default: 207). */
  legacyNotFound: boolean;
  /** Stop listening and drop open connections: requests are refused until up(). */
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

const MIN_MINOR = 82;

export async function startNovaStandIn(o: { token?: string } = {}): Promise<NovaStandIn> {
  const token = o.token ?? "nova-service-token";
  const calls: NovaCall[] = [];
  let failing: number | null = null;
  const s: NovaStandIn = {
    url: "",
    token,
    calls,
    accepted: () => calls.flatMap((c) => c.events.filter((_, i) => c.codes[i] === 200)),
    failWith: (status) => void (failing = status),
    gone: new Set(),
    noHost: new Set(),
    legacyNotFound: false,
    down: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
    },
    up: () => listen(port),
    stop: () => s.down(),
  };

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const fault = (kind: string, code: number, message: string) => ({ [kind]: { code, message } });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const at = performance.now();
    const headers = { ...req.headers } as Record<string, string | undefined>;
    const record = (status: number, events: StandInEvent[], codes: number[] = []) => calls.push({ at, headers, events, status, codes });
    if (req.method !== "POST" || req.url !== "/v2.1/os-server-external-events") return reply(res, 404, { message: "The resource could not be found." });
    let events: StandInEvent[] = [];
    try {
      events = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { events: StandInEvent[] }).events;
    } catch {
      record(400, []);
      return reply(res, 400, fault("badRequest", 400, "Malformed request body"));
    }
    if (failing !== null) {
      record(failing, events);
      return reply(res, failing, fault(failing >= 500 ? "computeFault" : "forbidden", failing, `stand-in told to answer ${failing}`));
    }
    if (req.headers["x-auth-token"] !== token) {
      record(401, events);
      return reply(res, 401, { error: { code: 401, title: "Unauthorized", message: "The request you have made requires authentication." } });
    }
    const minor = Number(/^compute 2\.(\d+)$/.exec(headers["openstack-api-version"] ?? "")?.[1] ?? /^2\.(\d+)$/.exec(headers["x-openstack-nova-api-version"] ?? "")?.[1] ?? 0);
    if (minor < MIN_MINOR) {
      record(400, events);
      return reply(res, 400, fault("badRequest", 400, "Invalid input for field/attribute name. Value: accelerator-request-bound. 'accelerator-request-bound' is not one of [...]"));
    }
    const codes = events.map((e) => (s.gone.has(e.server_uuid) ? 404 : s.noHost.has(e.server_uuid) ? 422 : 200));
    if (s.legacyNotFound && codes.every((c) => c === 404)) {
      record(404, events, codes);
      return reply(res, 404, fault("itemNotFound", 404, "No instances found for any event"));
    }
    const status = codes.every((c) => c === 200) ? 200 : 207;
    record(status, events, codes);
    reply(res, status, { events: events.map((e, i) => ({ ...e, status: codes[i] === 200 ? "completed" : "failed", code: codes[i] })) });
  }

  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  let port = 0;
  function listen(p: number): Promise<void> {
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(p, "127.0.0.1", () => {
        server.off("error", reject);
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  }
  await listen(0);
  s.url = `http://127.0.0.1:${port}/v2.1`;
  return s;
}

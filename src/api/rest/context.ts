/** What a REST handler gets, and what it returns. */
import type { IncomingMessage } from "node:http";
import type { CommandContext } from "../../domain/shared/types.js";
import { callerCommand, type ApiServices } from "../services.js";
import type { Caller } from "./auth.js";
import { badRequest } from "./errors.js";
import type { Microversion } from "./microversion.js";
import type { RestReads } from "./reads.js";

export interface RestContext {
  caller: Caller;
  version: Microversion;
  /** Scheme and host the client used: links are built on it (Cyborg's public_url when unset). */
  publicUrl: string;
  query: Query;
  services: ApiServices;
  reads: RestReads;
  /** The parsed JSON body (400 when it is not JSON, 413 past MAX_BODY_BYTES). */
  body(): Promise<unknown>;
  /** Who, when and why, for a command: the same context a GraphQL mutation hands the application. */
  command(): CommandContext & { isAdmin: boolean };
}

export interface RestResult {
  status: number;
  /** JSON body; none for 202, 204 and the empty 200s of device enable/disable. */
  body?: unknown;
  headers?: Record<string, string>;
}

export const ok = (body: unknown, status = 200): RestResult => ({ status, body });
export const empty = (status: number): RestResult => ({ status });

export function commandFor(services: ApiServices, caller: Caller, req: IncomingMessage) {
  const correlationId = header(req, "x-correlation-id") ?? header(req, "x-openstack-request-id");
  return callerCommand(caller.principal, correlationId);
}

/** Query parameters: each endpoint names the ones it takes; any other is refused, as WSME does. */
export class Query {
  constructor(private readonly params: URLSearchParams) {}

  only(...names: string[]): this {
    for (const key of this.params.keys()) {
      if (!names.includes(key)) {
        const takes = names.length ? `it takes ${names.join(", ")}` : "it takes none";
        throw badRequest(`Unknown argument: "${key}" (${takes})`, key);
      }
    }
    return this;
  }

  get(name: string): string | undefined {
    return this.params.get(name) ?? undefined;
  }

  all(name: string): string[] {
    return this.params.getAll(name);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

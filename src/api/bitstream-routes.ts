/**
 * The bitstream content over plain HTTP, beside GraphQL (files too large for a JSON body):
 *   GET  /bitstreams/<id>/content   the content (admin; or the agent of a host with a request in
 *                                   flight naming it); X-Checksum says what it must hash to
 *   POST /bitstreams?name=&functionId=&functionName=&regionType=&vendor=   upload (admin; the body
 *                                   is the content, streamed; BITSTREAM_MAX_BYTES)
 * The agent downloads from here rather than from Glance: it needs only this service's URL and its
 * agent token (no Glance credentials on compute hosts), one path serves both catalogues, and the
 * service checks that the agent was asked to program what it downloads.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { Application } from "../app/application.js";
import { DomainError } from "../domain/shared/types.js";
import type { Logger } from "../infra/logger.js";
import { allows } from "./auth/policy.js";
import type { Principal, TokenRegistry } from "./auth/tokens.js";
import type { HttpRoute } from "./http-server.js";
import { rateLimitedMessage, type RateLimit } from "./rate-limit.js";
import { afterCatchUp } from "./read-your-writes.js";
import { callerCommand } from "./services.js";

const CONTENT = /^\/bitstreams\/([0-9A-Za-z-]{1,64})\/content$/;
const STATUS: Record<string, number> = { BAD_USER_INPUT: 400, UNAUTHENTICATED: 401, FORBIDDEN: 403, NOT_FOUND: 404, CONFLICT: 409, RATE_LIMITED: 429 };

export function bitstreamRoutes(deps: { app: Application; tokens: TokenRegistry; catchUp(): Promise<void>; log: Logger; rateLimit?: RateLimit }): HttpRoute {
  return async (req, res, pathname, search) => {
    const content = CONTENT.exec(pathname);
    if (!(content && req.method === "GET") && !(pathname === "/bitstreams" && req.method === "POST")) return false;
    try {
      const principal = deps.tokens.authenticate(req.headers.authorization);
      const limited = await deps.rateLimit?.take(principal, req.socket.remoteAddress);
      if (limited) {
        res.setHeader("retry-after", String(limited.retryAfterS));
        throw new HttpError("RATE_LIMITED", rateLimitedMessage(limited));
      }
      if (!principal) throw new HttpError("UNAUTHENTICATED", "missing or unknown bearer token: send `Authorization: Bearer <token>`");
      if (content) await download(deps.app, principal, content[1]!, res);
      else await upload(deps, principal, req, res, new URLSearchParams(search));
    } catch (err) {
      fail(res, err, deps.log);
    }
    return true;
  };
}

async function download(app: Application, p: Principal, id: string, res: ServerResponse): Promise<void> {
  const forHost = p.roles.has("admin") ? null : p.roles.has("agent") ? p.hostname : undefined;
  if (forHost === undefined) throw new HttpError("FORBIDDEN", "downloading a bitstream needs an admin token or the agent token of a host asked to program it");
  const { bitstream, content } = await app.bitstreamContent(id, forHost);
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bitstream.size, "x-checksum": bitstream.checksum });
  await pipeline(content, res).catch(() => res.destroy());
}

async function upload(deps: { app: Application; catchUp(): Promise<void> }, p: Principal, req: IncomingMessage, res: ServerResponse, q: URLSearchParams): Promise<void> {
  if (!allows(p, "bitstream:write")) throw new HttpError("FORBIDDEN", "your token's roles do not allow uploading bitstreams (admin)");
  const field = (name: string) => q.get(name) ?? undefined;
  const correlation = req.headers["x-correlation-id"];
  const ctx = callerCommand(p, typeof correlation === "string" ? correlation : undefined);
  const meta = { name: field("name"), functionId: field("functionId"), functionName: field("functionName"), regionType: field("regionType"), vendor: field("vendor") };
  send(res, 201, await afterCatchUp(deps.catchUp, () => deps.app.uploadBitstream(ctx, meta, req)));
}

class HttpError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function fail(res: ServerResponse, err: unknown, log: Logger): void {
  const known = err instanceof DomainError || err instanceof HttpError;
  if (!known) log.error({ err }, "bitstream route failed");
  if (res.headersSent) return void res.destroy();
  const code = known ? err.code : "INTERNAL_SERVER_ERROR";
  const message = known ? err.message : "internal error; the server log has the details";
  const field = err instanceof DomainError && err.field ? { field: err.field } : {};
  // An upload refused before its body was read: do not keep the connection for the rest of it.
  res.setHeader("connection", "close");
  send(res, STATUS[code] ?? 500, { errors: [{ message, extensions: { code, ...field } }] });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(s) });
  res.end(s);
}

/** Small pieces of plain node:http that every route of the API server uses. */
import type { IncomingMessage, ServerResponse } from "node:http";
import getRawBody from "raw-body";

/**
 * The request body, or undefined past `limit` bytes (the caller answers 413 and closes the
 * connection; raw-body stops reading what is left of the body).
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  try {
    return (await getRawBody(req, { limit })).toString("utf8");
  } catch (err) {
    if ((err as { type?: string }).type === "entity.too.large") return undefined;
    throw err;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(s), ...headers });
  res.end(s);
}

/** Path and query of a request target (a WHATWG URL per request costs more than the rest of routing). */
export function splitUrl(target: string): { pathname: string; search: string } {
  // Absolute-form targets (from proxies) and dot segments take the full parser.
  if (target[0] !== "/" || target.includes("/.")) return new URL(target, "http://localhost");
  const q = target.indexOf("?");
  return q < 0 ? { pathname: target, search: "" } : { pathname: target.slice(0, q), search: target.slice(q) };
}

export const graphqlError = (message: string, code: string, extra: Record<string, unknown> = {}) => ({ errors: [{ message, extensions: { code, ...extra } }] });
export const headerValue = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

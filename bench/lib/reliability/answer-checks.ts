/**
 * What every answer must be, whatever was asked: a typed error, never an internal one;
 * no stack trace or source path in any message; every GraphQL error with `extensions.code`; every
 * REST error in Cyborg's envelope with its `code`. Each check returns the violations it found.
 */
import type { HttpAnswer, WsAnswer } from "./wire.js";

export interface Violation {
  kind: "internal" | "no-code" | "stack" | "status" | "not-json" | "envelope" | "no-answer" | "socket";
  detail: string;
}

const STACK_FRAME = /(^|\n)\s+at [^\n]*:\d+:\d+/;
const INDENTED_AT = / {4}at /;
const SOURCE_PATH = /(?:[\\/][\w.@-]+)+\.(?:ts|js|mjs|cjs)(?::\d+)?|node_modules|file:\/\//;

/** Text that looks like part of a stack trace or names a source file. */
export function looksLikeStack(text: string): boolean {
  return INDENTED_AT.test(text) || STACK_FRAME.test(text) || SOURCE_PATH.test(text);
}

const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}... (${s.length} chars)` : s);

/** GraphQL errors as a client reads them, from either transport. */
export function checkGraphqlErrors(errors: unknown): Violation[] {
  if (errors === undefined) return [];
  if (!Array.isArray(errors)) return [{ kind: "no-code", detail: `errors is not a list: ${clip(JSON.stringify(errors))}` }];
  const out: Violation[] = [];
  for (const e of errors as Array<{ message?: unknown; extensions?: { code?: unknown } }>) {
    const code = e?.extensions?.code;
    const text = JSON.stringify(e);
    if (code === "INTERNAL_SERVER_ERROR") out.push({ kind: "internal", detail: clip(text) });
    else if (typeof code !== "string" || code.length === 0) out.push({ kind: "no-code", detail: clip(text) });
    if (looksLikeStack(text)) out.push({ kind: "stack", detail: clip(text, 600) });
  }
  return out;
}

/** An answer of POST /graphql. */
export function checkGraphqlHttp(a: HttpAnswer): Violation[] {
  const out: Violation[] = [];
  if (a.status >= 500) out.push({ kind: "status", detail: `HTTP ${a.status}: ${clip(a.text)}` });
  let body: { data?: unknown; errors?: unknown };
  try {
    body = JSON.parse(a.text);
  } catch {
    return [...out, { kind: "not-json", detail: `HTTP ${a.status}: ${clip(a.text)}` }];
  }
  if (a.status >= 400 && body?.errors === undefined) out.push({ kind: "no-code", detail: `HTTP ${a.status} without errors: ${clip(a.text)}` });
  return [...out, ...checkGraphqlErrors(body?.errors)];
}

/** What a graphql-ws operation produced; `subscription` says whether waiting without an answer is normal. */
export function checkGraphqlWs(a: WsAnswer, subscription: boolean): Violation[] {
  const out: Violation[] = [];
  for (const n of a.nexts) out.push(...checkGraphqlErrors(n.errors));
  if (a.error !== undefined) {
    if (Array.isArray(a.error)) out.push(...checkGraphqlErrors(a.error));
    else {
      // The socket closed: 4500 and 1011 are internal errors, 1006 a socket dropped without a
      // close frame; the other codes are the protocol's refusals (4400 bad message, 4403 no token, 1009 too big).
      const close = a.error as { code?: number; reason?: string };
      if (close.code === 4500 || close.code === 1011 || close.code === 1006 || close.code === undefined) out.push({ kind: "socket", detail: `closed ${close.code}: ${clip(String(close.reason ?? a.error))}` });
      if (looksLikeStack(String(close.reason ?? ""))) out.push({ kind: "stack", detail: clip(String(close.reason)) });
    }
  }
  if (a.open && !subscription && a.nexts.length === 0) out.push({ kind: "no-answer", detail: "a query or mutation over WebSocket got no answer" });
  return out;
}

/** An answer of the Cyborg v2 REST API. */
export function checkRest(method: string, a: HttpAnswer): Violation[] {
  const out: Violation[] = [];
  // 501 is the deliberate NOT_IMPLEMENTED of PATCH /deployables/{uuid}/program.
  const deliberate501 = a.status === 501 && /"code\\":\\"NOT_IMPLEMENTED\\"/.test(a.text);
  if (a.status >= 500 && !deliberate501) out.push({ kind: "status", detail: `HTTP ${a.status}: ${clip(a.text)}` });
  // 431 and 414 come from node:http itself (a request line or headers past its limit), before any route.
  if (a.status < 400 || method === "HEAD" || ((a.status === 431 || a.status === 414) && a.text === "")) return out;
  let fault: { code?: unknown; faultstring?: unknown };
  try {
    const body = JSON.parse(a.text) as { error_message?: unknown };
    if (typeof body?.error_message !== "string" || Object.keys(body).length !== 1) throw new Error("not the envelope");
    fault = JSON.parse(body.error_message);
  } catch {
    return [...out, { kind: "envelope", detail: `HTTP ${a.status} outside Cyborg's error envelope: ${clip(a.text)}` }];
  }
  if (typeof fault?.code !== "string" || typeof fault?.faultstring !== "string") out.push({ kind: "envelope", detail: `fault without code or faultstring: ${clip(a.text)}` });
  if (fault?.code === "INTERNAL_SERVER_ERROR") out.push({ kind: "internal", detail: clip(a.text) });
  if (looksLikeStack(a.text)) out.push({ kind: "stack", detail: clip(a.text, 600) });
  return out;
}

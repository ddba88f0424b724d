/**
 * The reliability suite's wire: raw GraphQL over HTTP (any body, any token, the answer as sent)
 * and raw HTTP requests for REST; raw-ws.ts is the WebSocket side. Nothing here interprets an
 * answer; the checks are in answer-checks.ts.
 */
import { ROLE_TOKENS, type Who } from "./tokens.js";

/** A caller: a role's token, no token, or a token the server does not know. */
export type Caller = Who | null | "unknown";

export const UNKNOWN_TOKEN = "not-a-known-token-0123456789";
export const tokenFor = (who: Caller) => (who === null ? undefined : who === "unknown" ? UNKNOWN_TOKEN : ROLE_TOKENS[who].token);

/** How long one request may take before it counts as unanswered (far beyond any healthy answer). */
export const NO_ANSWER_MS = 120_000;

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export async function httpRequest(url: string, init: { method: string; headers?: Record<string, string>; body?: string }): Promise<HttpAnswer> {
  const res = await fetch(url, { method: init.method, headers: init.headers, body: init.body, signal: AbortSignal.timeout(NO_ANSWER_MS) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** POST /graphql with `body` as given (an object is sent as JSON, a string as it is). */
export function postGraphql(url: string, who: Caller, body: unknown): Promise<HttpAnswer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const token = tokenFor(who);
  if (token) headers.authorization = `Bearer ${token}`;
  return httpRequest(url, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** Like postGraphql, but the data, throwing on errors: for setting up and checking state. */
export async function gql<T = any>(url: string, who: Caller, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await postGraphql(url, who, { query, variables });
  const body = JSON.parse(r.text) as { data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> };
  if (body.errors?.length) {
    const e = body.errors[0]!;
    throw new GqlError(e.extensions?.code ?? "NO_CODE", e.message);
  }
  return body.data as T;
}

export class GqlError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** What one graphql-ws operation produced. */
export interface WsAnswer {
  nexts: Array<{ data?: unknown; errors?: unknown[] }>;
  /** The sink's error: GraphQL errors (an array) or the socket's close event. */
  error?: unknown;
  completed: boolean;
  /** It was still open when we stopped waiting (a subscription with nothing to send yet). */
  open: boolean;
}


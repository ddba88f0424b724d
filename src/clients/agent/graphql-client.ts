import { AbortError } from "p-retry";

export interface GraphQLClientOptions {
  url: string;
  token: string;
  /** Per-request timeout. */
  timeoutMs?: number;
}

/** A GraphQL error the server answered with; `code` is its extensions.code. */
export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly status: number,
    /** How long the server asked to be left alone (Retry-After, or extensions.retryAfterSeconds), in seconds. */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = "GraphQLRequestError";
  }
}

const FINAL_CODES = new Set(["UNAUTHENTICATED", "FORBIDDEN", "BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED", "GRAPHQL_PARSE_FAILED"]);

/**
 * POST one operation. Network failures and 5xx are thrown as retryable errors; answers that will
 * not change on retry (bad token, refused, bad input) are wrapped in p-retry's AbortError. With an
 * idempotency key, every retry of a mutation sends the same key (see docs/api.md, idempotency keys).
 */
export async function postGraphQL<T>(opts: GraphQLClientOptions, query: string, variables: Record<string, unknown>, idempotencyKey?: string): Promise<T> {
  let res: Response;
  const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${opts.token}` };
  // A retry under the same key gets the first answer: the service writes the mutation once.
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  try {
    res = await fetch(opts.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    });
  } catch (err) {
    throw new Error(`cannot reach ${opts.url}: ${(err as Error).cause ?? (err as Error).message}`);
  }
  const text = await res.text();
  let body: { data?: T; errors?: Array<{ message: string; extensions?: { code?: string; retryAfterSeconds?: unknown } }> };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${opts.url} answered HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  const first = body.errors?.[0];
  if (first) {
    const err = new GraphQLRequestError(first.message, first.extensions?.code, res.status, retryAfterOf(res, first.extensions?.retryAfterSeconds));
    throw FINAL_CODES.has(err.code ?? "") ? new AbortError(err) : err;
  }
  if (!res.ok || body.data === undefined) throw new GraphQLRequestError(`HTTP ${res.status}`, undefined, res.status, retryAfterOf(res, undefined));
  return body.data;
}

/** Retry-After in seconds (the header's delta-seconds form, else the error's extension), when the server gave one. */
function retryAfterOf(res: Response, extension: unknown): number | undefined {
  const header = Number(res.headers.get("retry-after") ?? NaN);
  if (Number.isFinite(header) && header >= 0) return header;
  return typeof extension === "number" && Number.isFinite(extension) && extension >= 0 ? extension : undefined;
}

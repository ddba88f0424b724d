/**
 * The console talks to the service as any client does: GraphQL over HTTP with a bearer token,
 * subscriptions over graphql-ws on the same path, and /readyz for health.
 */
import { createClient, type Client } from "graphql-ws";

const TOKEN_KEY = "cyborg-es.token";

export const storedToken = (): string => localStorage.getItem(TOKEN_KEY) ?? "";
export const storeToken = (token: string) => (token ? localStorage.setItem(TOKEN_KEY, token) : localStorage.removeItem(TOKEN_KEY));

export interface GqlError {
  message: string;
  extensions?: { code?: string; field?: string };
}

/** The GraphQL errors of an answer; `code` is the first one's extensions.code. */
export class ApiError extends Error {
  constructor(readonly errors: GqlError[]) {
    super(errors.map((e) => e.message).join("; "));
  }
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

export async function gql<T>(token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${location.origin}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json().catch(() => ({ errors: [{ message: `HTTP ${res.status}` }] }))) as { data?: T; errors?: GqlError[] };
  if (body.errors?.length) throw new ApiError(body.errors);
  return body.data as T;
}

let ws: { token: string; client: Client } | undefined;

/** One graphql-ws connection per token, opened on first use. */
export function subscriptions(token: string): Client {
  if (ws?.token === token) return ws.client;
  void ws?.client.dispose();
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  ws = { token, client: createClient({ url, connectionParams: { authorization: `Bearer ${token}` }, lazy: true, retryAttempts: Infinity }) };
  return ws.client;
}

export interface Viewer {
  principal: string;
  roles: string[];
  projectId: string | null;
  allows: string[];
}

export const VIEWER = `{ viewer { principal roles projectId allows } }`;

export interface Readiness {
  status: string;
  eventLog?: string;
  head?: string | null;
  boundSubscriptions?: number;
  error?: string;
  projections?: Array<{ name: string; state: string; checkpoint: string | null; lagEvents?: number; lagMs: number; error?: string }>;
}

/** Ready or not; with an admin's token also the log's head, each projection and the open subscriptions. */
export async function readiness(): Promise<Readiness> {
  const token = storedToken();
  const res = await fetch(`${location.origin}/readyz`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return (await res.json()) as Readiness;
}

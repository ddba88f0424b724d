/**
 * How every command that talks to a running service finds it and authenticates, the same way the
 * agent does: `--url`, else CYBORG_URL, else where `npm start` in the same environment listens
 * (PORT and HOST); a token from `--token`, `--token-file`, CYBORG_TOKEN or CYBORG_TOKEN_FILE. A
 * refused token is explained in the command line's terms, not HTTP's.
 */
import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { adminTokenCommand } from "../api/auth/tokens.js";
import { postGraphQL, type GraphQLClientOptions } from "../clients/agent/graphql-client.js";

/** The role a command's token needs, as its help and errors name it. */
export type TokenRole = "admin" | "service" | "agent" | "any";

const ROLE_TEXT: Record<TokenRole, string> = {
  admin: "an admin token",
  service: "a service token (the compute service's)",
  agent: "an agent token for this host (or an admin token)",
  any: "a token (admin, for changes)",
};

/** Where `npm start` in the same environment listens: PORT and HOST (a wildcard address is reached on loopback). */
export function defaultUrl(env: NodeJS.ProcessEnv = process.env): string {
  const host = !env.HOST || env.HOST === "0.0.0.0" || env.HOST === "::" ? "127.0.0.1" : env.HOST;
  return `http://${host.includes(":") ? `[${host}]` : host}:${env.PORT || "4000"}/graphql`;
}

/** Adds --url, --token and --token-file (with their environment variables) to `cmd`. */
export function withService(cmd: Command, role: TokenRole): Command {
  return cmd
    .addOption(new Option("--url <url>", "the service's GraphQL endpoint (default: from PORT and HOST, as the service reads them)").env("CYBORG_URL").default(defaultUrl()))
    .addOption(new Option("--token <token>", `${ROLE_TEXT[role]} (visible to other users in ps: prefer --token-file or CYBORG_TOKEN)`).env("CYBORG_TOKEN"))
    .addOption(new Option("--token-file <file>", `a file holding ${ROLE_TEXT[role]}, or the service's tokens.json (its first token with that role is taken)`).env("CYBORG_TOKEN_FILE"));
}

export interface ServiceOptions {
  url: string;
  token?: string;
  tokenFile?: string;
}

export interface ServiceClient extends GraphQLClientOptions {
  role: TokenRole;
}

/**
 * The URL and token `cmd`'s options give. A token or token file on the command line wins over
 * one from the environment; a token wins over a token file given the same way.
 */
export function serviceClient(cmd: Command, role: TokenRole): ServiceClient {
  const o = cmd.opts<ServiceOptions>();
  const fromCli = (name: string) => cmd.getOptionValueSource(name) === "cli";
  const order: Array<"token" | "tokenFile"> = fromCli("tokenFile") && !fromCli("token") ? ["tokenFile", "token"] : ["token", "tokenFile"];
  for (const name of order) {
    if (name === "token" && o.token) return { url: o.url, token: o.token, role };
    if (name === "tokenFile" && o.tokenFile) return { url: o.url, token: readTokenFile(o.tokenFile, role), role };
  }
  throw new Error(`no token: pass --token-file <file>, set CYBORG_TOKEN, or pass --token (${ROLE_TEXT[role]}). ${whereTokensAre()}`);
}

/** A token file: one token, or a tokens.json as the service reads it (the first token with `role`). */
export function readTokenFile(file: string, role: TokenRole): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new Error(`cannot read the token file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!text.startsWith("{")) {
    if (!text || /\s/.test(text)) throw new Error(`the token file ${file} must hold one token (or be a tokens.json)`);
    return text;
  }
  let tokens: Array<{ token?: unknown; roles?: unknown }>;
  try {
    tokens = (JSON.parse(text) as { tokens?: typeof tokens }).tokens ?? [];
  } catch (err) {
    throw new Error(`the token file ${file} starts with { but is not JSON: ${(err as Error).message}`);
  }
  const wanted = role === "any" ? ["admin", "service", "agent"] : role === "agent" ? ["admin", "agent"] : [role];
  for (const want of wanted) {
    const hit = tokens.find((t) => typeof t.token === "string" && Array.isArray(t.roles) && t.roles.includes(want));
    if (hit) return hit.token as string;
  }
  throw new Error(`the token file ${file} has no token with the ${wanted.join(" or ")} role`);
}

/** Where an embedded service keeps its tokens, for the advice in errors. */
function whereTokensAre(env: NodeJS.ProcessEnv = process.env): string {
  const file = env.AUTH_TOKENS_FILE ? env.AUTH_TOKENS_FILE : `${env.DATA_DIR || "data"}/tokens.json`;
  return `An embedded service keeps them in ${file} (--token-file ${file}; the admin token alone: ${adminTokenCommand({ AUTH_TOKENS_FILE: env.AUTH_TOKENS_FILE, DATA_DIR: env.DATA_DIR || "data" })}).`;
}

/** The service's refusals, in the command line's terms; anything else unchanged. */
export function explainRefusal(err: unknown, client: { url: string; role: TokenRole }): Error {
  const cause = (err as { originalError?: unknown }).originalError ?? err;
  const code = (cause as { code?: string }).code;
  if (code === "UNAUTHENTICATED") {
    return new Error(`the service at ${client.url} does not know this token: pass ${ROLE_TEXT[client.role]} with --token-file, CYBORG_TOKEN or --token. ${whereTokensAre()}`);
  }
  if (code === "FORBIDDEN") {
    return new Error(`the service at ${client.url} refused: ${(cause as Error).message}. Pass ${ROLE_TEXT[client.role]} with --token-file, CYBORG_TOKEN or --token.`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** One GraphQL operation against the service, its refusals explained. */
export async function callService<T>(client: ServiceClient, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  try {
    return await postGraphQL<T>(client, query, variables);
  } catch (err) {
    throw explainRefusal(err, client);
  }
}

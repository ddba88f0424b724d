import { randomBytes } from "node:crypto";
import { sha256Hex as sha256 } from "../../domain/shared/sha256.js";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const ROLES = ["admin", "manager", "member", "reader", "service", "agent"] as const;
export type Role = (typeof ROLES)[number];

const tokenFile = z.object({
  tokens: z.array(
    z
      .object({
        token: z.string().min(16, "tokens must be at least 16 characters"),
        roles: z.array(z.enum(ROLES)).min(1),
        projectId: z.string().min(1).nullable().optional(),
        hostname: z.string().min(1).nullable().optional(),
        name: z.string().min(1).optional(),
      })
      .refine((t) => !t.roles.includes("agent") || Boolean(t.hostname), "an agent token must name its hostname"),
  ),
});

/** Who is calling. `principal` is what the event metadata records. */
export interface Principal {
  principal: string;
  roles: ReadonlySet<Role>;
  projectId: string | null;
  hostname: string | null;
}

export class TokenRegistry {
  private readonly byHash = new Map<string, Principal>();

  constructor(entries: z.infer<typeof tokenFile>["tokens"]) {
    for (const [i, t] of entries.entries()) {
      // The principal is recorded in every event the token's requests cause, for ever.
      if (t.name?.includes(t.token)) throw new Error(`token entry ${i}: its name must not contain the token (the name is recorded in the event log as the principal)`);
      const hash = sha256(t.token);
      this.byHash.set(hash, {
        principal: t.name ?? `${t.roles.join("+")}:${hash.slice(0, 8)}`,
        roles: new Set(t.roles),
        projectId: t.projectId ?? null,
        hostname: t.hostname ?? null,
      });
    }
  }

  static fromFile(path: string): TokenRegistry {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, "utf8"));
    } catch (err) {
      throw new Error(`AUTH_TOKENS_FILE ${path}: ${(err as Error).message}`);
    }
    const parsed = tokenFile.safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      throw new Error(`AUTH_TOKENS_FILE ${path} is not a valid token file: ${why}`);
    }
    try {
      return new TokenRegistry(parsed.data.tokens);
    } catch (err) {
      throw new Error(`AUTH_TOKENS_FILE ${path}: ${(err as Error).message}`);
    }
  }

  /** The principal for an `Authorization` header value, or undefined when it is absent or unknown. */
  authenticate(authorization: string | undefined | null): Principal | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    return m ? this.lookup(m[1]!) : undefined;
  }

  /** The principal for a bare token (the REST API's X-Auth-Token and X-Service-Token), or undefined. */
  lookup(token: string): Principal | undefined {
    return this.byHash.get(sha256(token));
  }
}

/**
 * The embedded mode's first start: a token file with an admin and a service token in DATA_DIR.
 * Returns its path and whether it was just created.
 */
export function ensureEmbeddedTokenFile(dataDir: string): { path: string; created: boolean } {
  const path = join(dataDir, "tokens.json");
  if (existsSync(path)) return { path, created: false };
  mkdirSync(dataDir, { recursive: true });
  // Hex: one plain word that never starts with "-" (base64url's can, and the openstack CLI then takes
  // `--os-token $ADMIN` for a missing argument) and that no shell needs quoted.
  const token = () => randomBytes(24).toString("hex");
  const file = {
    tokens: [
      { name: "admin", token: token(), roles: ["admin"], projectId: "admin", hostname: null },
      { name: "nova", token: token(), roles: ["service"], projectId: "service", hostname: null },
    ],
  };
  writeFileSync(path, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 });
  return { path, created: true };
}

/**
 * The registry the service authenticates with: AUTH_TOKENS_FILE, or in the embedded mode a file in
 * DATA_DIR made on first start (the admin and service tokens, and where they are, are printed).
 */
export function loadTokenRegistry(
  config: { AUTH_TOKENS_FILE?: string; DATA_DIR: string; mode: "embedded" | "production" },
  log: { info(obj: object, msg: string): void },
): TokenRegistry {
  if (config.AUTH_TOKENS_FILE) return TokenRegistry.fromFile(config.AUTH_TOKENS_FILE);
  if (config.mode === "production") {
    throw new Error("AUTH_TOKENS_FILE is required outside the embedded mode (see deploy/tokens.example.json)");
  }
  const { path, created } = ensureEmbeddedTokenFile(config.DATA_DIR);
  log.info({ tokensFile: path, created }, created ? "created a token file with an admin and a service token" : "using the token file");
  if (created) console.error(`cyborg-es: tokens for the admin and the compute service are in ${path}`);
  return TokenRegistry.fromFile(path);
}

/** The first admin token of the token file (AUTH_TOKENS_FILE, or the embedded mode's), for the CLI on the server's machine; undefined when unreadable. */
export function embeddedAdminToken(config: { AUTH_TOKENS_FILE?: string; DATA_DIR: string }): string | undefined {
  try {
    const file = JSON.parse(readFileSync(config.AUTH_TOKENS_FILE ?? join(config.DATA_DIR, "tokens.json"), "utf8")) as { tokens?: Array<{ token?: string; roles?: string[] }> };
    return file.tokens?.find((t) => t.roles?.includes("admin"))?.token;
  } catch {
    return undefined;
  }
}

/** A path as a shell reads it: as is when it holds only safe characters, otherwise single-quoted. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that prints the admin token of the service's token file, for the start-up block,
 * the console's sign-in hint and the CLI's advice: the embedded file's first entry is the admin's;
 * an AUTH_TOKENS_FILE is searched for the first token with the admin role.
 */
export function adminTokenCommand(config: { AUTH_TOKENS_FILE?: string; DATA_DIR: string }): string {
  if (config.AUTH_TOKENS_FILE) return `jq -r 'first(.tokens[] | select(.roles | index("admin"))) | .token' ${shellWord(config.AUTH_TOKENS_FILE)}`;
  return `jq -r '.tokens[0].token' ${shellWord(join(config.DATA_DIR, "tokens.json"))}`;
}

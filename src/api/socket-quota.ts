/**
 * Per-token caps on what WebSocket clients hold open in this process: connections
 * (WS_MAX_CONNECTIONS_PER_TOKEN) and subscriptions (WS_MAX_SUBSCRIPTIONS_PER_TOKEN). A token is
 * counted by its principal; roles in RATE_LIMIT_EXEMPT_ROLES are not counted (the compute service
 * waits for every bind of a boot storm at once). Each API replica counts its own sockets.
 */
import type { Principal, Role } from "./auth/tokens.js";

export interface SocketQuotaSettings {
  /** Open connections per token; 0: no cap. */
  connections: number;
  /** Open subscriptions per token, over all its connections; 0: no cap. */
  subscriptions: number;
  exemptRoles: ReadonlySet<Role>;
}

/** Why a connection or subscription was refused: a stable code and what to do about it. */
export interface SocketRefusal {
  code: "TOO_MANY_CONNECTIONS" | "TOO_MANY_SUBSCRIPTIONS";
  message: string;
  limit: number;
}

/** WebSocket close code for a refused connection (4400-4499: the client's doing, as graphql-ws uses them). */
export const TOO_MANY_CONNECTIONS_CLOSE = 4429;

export class SocketQuota {
  private readonly connections = new Map<string, number>();
  private readonly subscriptions = new Map<string, number>();

  constructor(private readonly settings: SocketQuotaSettings) {}

  /** Counts a connection of the principal; its release, or the refusal. */
  openConnection(p: Principal): { release(): void } | SocketRefusal {
    const limit = this.settings.connections;
    return this.open(this.connections, p, limit, () => ({
      code: "TOO_MANY_CONNECTIONS",
      message: `too many open connections: at most ${limit} per token (WS_MAX_CONNECTIONS_PER_TOKEN)`,
      limit,
    }));
  }

  /** Counts a subscription of the principal; its release, or the refusal. */
  openSubscription(p: Principal): { release(): void } | SocketRefusal {
    const limit = this.settings.subscriptions;
    return this.open(this.subscriptions, p, limit, () => ({
      code: "TOO_MANY_SUBSCRIPTIONS",
      message: `too many open subscriptions: a token may hold ${limit} (WS_MAX_SUBSCRIPTIONS_PER_TOKEN); complete one first`,
      limit,
    }));
  }

  private open(counts: Map<string, number>, p: Principal, limit: number, refusal: () => SocketRefusal): { release(): void } | SocketRefusal {
    if ([...p.roles].some((r) => this.settings.exemptRoles.has(r))) return { release: () => undefined };
    const key = p.principal;
    const held = counts.get(key) ?? 0;
    if (limit > 0 && held >= limit) return refusal();
    counts.set(key, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (counts.get(key) ?? 1) - 1;
        if (left > 0) counts.set(key, left);
        else counts.delete(key);
      },
    };
  }
}

export const isRefusal = (r: { release(): void } | SocketRefusal): r is SocketRefusal => "code" in r;

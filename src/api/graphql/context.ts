import { randomUUID } from "node:crypto";
import type { CommandContext } from "../../domain/shared/types.js";
import type { Principal } from "../auth/tokens.js";
import { callerCommand, validCorrelationId, type ApiServices } from "../services.js";
import { Loaders } from "../loaders.js";

export interface ApiContext {
  principal: Principal | undefined;
  correlationId: string;
  services: ApiServices;
  loaders: Loaders;
  /** The request's Idempotency-Key, as sent (checked where it is used). */
  idempotencyKey?: unknown;
  /** The mutation the key covers, once it runs. */
  keyedMutation?: string;
  /** The keyed mutation runs again after an attempt that may have written (see CommandContext). */
  resuming?: boolean;
  /** When the request's time budget ends (Date.now() ms); resolvers past it answer TIMEOUT. */
  deadline?: number;
  /** Sent as the answer's `extensions.warnings` (graphql/warnings.ts). */
  warnings?: string[];
}

export function createContext(services: ApiServices, principal: Principal | undefined, correlationId?: string, idempotencyKey?: unknown): ApiContext {
  return {
    principal,
    correlationId: validCorrelationId(correlationId) ?? randomUUID(),
    services,
    loaders: new Loaders(services.readStore),
    idempotencyKey,
    deadline: services.requestTimeoutMs === undefined ? undefined : Date.now() + services.requestTimeoutMs,
  };
}

/** The command context a mutation hands to the application: who, when, why. */
export const commandContext = (ctx: ApiContext): CommandContext & { isAdmin: boolean } => callerCommand(ctx.principal!, ctx.correlationId, ctx.resuming);

import { randomUUID } from "node:crypto";
import type { ArqBoundEvent } from "../../../projections/arqs/bound-notifier.js";
import type { Application } from "../../app/application.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { EventStore } from "../../eventstore/port.js";
import type { Logger } from "../../logger.js";
import type { OperationMetrics } from "../../observability/metrics.js";
import type { ReadStore } from "../../readstore/port.js";
import type { ProgrammingFeed } from "../programming-feed.js";
import type { Principal } from "../auth/tokens.js";
import { seesAllProjects } from "../auth/policy.js";
import { Loaders } from "./loaders.js";

/** Everything resolvers reach; built once by the composition root. */
export interface ApiServices {
  app: Application;
  /** Where the read models live; resolvers read them with the queries of projections/<model>/queries.ts. */
  readStore: ReadStore;
  store: EventStore;
  notifications: NotificationFeed;
  /** New programming requests per host, for the agents' subscriptions. */
  programming: Pick<ProgrammingFeed, "listen">;
  /** Resolves once the read models reflect the log up to its current head (read-your-writes). */
  catchUp(): Promise<void>;
  limits: { maxBindings: number };
  /** bindAcceleratorRequests binds at once the ARQs whose handle is free (one commit); the binder does the rest. */
  bindInline: boolean;
  /** How long an idempotency key is remembered (IDEMPOTENCY_TTL_S). */
  idempotencyTtlMs: number;
  /** Each query's and mutation's execution time budget (REQUEST_TIMEOUT_S); none when absent. */
  requestTimeoutMs?: number;
  /** Where front doors record operations and agent reports (absent with METRICS=off). */
  metrics?: OperationMetrics;
  /** Where front doors log what an operator should hear of (a host report refused). */
  log?: Logger;
}

/** What a listener waits for: these ARQs, or this instance's ARQs, or (neither) everything. */
export interface NotificationFilter {
  arqUuids?: readonly string[] | null;
  instanceUuid?: string | null;
}

export interface NotificationFeed {
  /** Starts listening at once; `ready` resolves when no notification published later can be missed. */
  listen(filter?: NotificationFilter): { ready: Promise<void>; events: AsyncIterable<ArqBoundEvent>; close(): void };
}

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
}

/** A client's X-Correlation-Id when it is one the audit log keeps (word characters, . : -, at most 128). */
export const validCorrelationId = (id: string | undefined): string | undefined => (id && /^[\w.:-]{1,128}$/.test(id) ? id : undefined);

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
export function commandContext(ctx: ApiContext): CommandContext & { isAdmin: boolean } {
  const p = ctx.principal!;
  return {
    principal: p.principal,
    roles: [...p.roles],
    correlationId: ctx.correlationId,
    causationId: ctx.correlationId,
    at: new Date().toISOString(),
    projectId: p.projectId,
    isAdmin: seesAllProjects(p),
    resuming: ctx.resuming,
  };
}

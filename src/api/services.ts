/**
 * What both front doors (GraphQL and the Cyborg REST API) reach, and what they share: the
 * services the composition root builds once, and the command context of a caller's request.
 */
import { randomUUID } from "node:crypto";
import type { ArqBoundEvent } from "../../projections/arqs/bound-notifier.js";
import type { Application } from "../app/application.js";
import type { CommandContext } from "../domain/shared/types.js";
import type { EventStore } from "../infra/eventstore/port.js";
import type { ReadStore } from "../infra/readstore/port.js";
import type { OperationMetrics } from "../observability/metrics.js";
import type { Logger } from "../infra/logger.js";
import { seesAllProjects } from "./auth/policy.js";
import type { Principal } from "./auth/tokens.js";
import type { EvictionFeed } from "./eviction-router.js";
import type { ProgrammingFeed } from "./programming-feed.js";
import type { ReportAdmission } from "./report-admission.js";

/** Everything resolvers reach; built once by the composition root. */
export interface ApiServices {
  app: Application;
  /** Where the read models live; resolvers read them with the queries of projections/<model>/queries.ts. */
  readStore: ReadStore;
  store: EventStore;
  /** The log with its archive (retention, docs/audit.md): where history, trace and asOf read; the live log when there is none. */
  auditStore?: EventStore;
  notifications: NotificationFeed;
  /** Eviction notices as they are given, for acceleratorRequestEvicted. */
  evictions: EvictionFeed;
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
  /** How many whole host reports are taken at once (report-admission.ts); none: no limit. */
  reportAdmission?: ReportAdmission;
  /** Where front doors log what an operator should hear of (a host report refused). */
  log?: Logger;
  /** This process's Placement sync (role `placement`), for "has Placement got this host's traits"; absent without the role. */
  placement?: { hostSynced(hostname: string): Promise<{ synced: boolean; reason: string | null }> };
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

/** Seconds a client should wait before asking again when the read models are unavailable. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/** A client's X-Correlation-Id when it is one the audit log keeps (word characters, . : -, at most 128). */
export const validCorrelationId = (id: string | undefined): string | undefined => (id && /^[\w.:-]{1,128}$/.test(id) ? id : undefined);

/** The command context of a caller's request: who, when, why (its correlation id, or a new one). */
export function callerCommand(p: Principal, correlationId: string | undefined, resuming?: boolean): CommandContext & { isAdmin: boolean } {
  const id = validCorrelationId(correlationId) ?? randomUUID();
  return {
    principal: p.principal,
    roles: [...p.roles],
    correlationId: id,
    causationId: id,
    at: new Date().toISOString(),
    projectId: p.projectId,
    isAdmin: seesAllProjects(p),
    resuming,
  };
}

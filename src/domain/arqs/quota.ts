/**
 * The per-project ARQ quota (ARQ_QUOTA_PER_PROJECT): the most ARQs a project may hold, the limit
 * on the ARQS class of its quota stream (domain/quotas/decider.ts), whose claims the log
 * serialises: creations racing for the last places cannot both take them.
 */
import { DomainError } from "../shared/types.js";

export interface QuotaCheck {
  projectId: string;
  /** ARQs the project holds (before the creation; or after it, counting it, with `asking` 0). */
  held: number;
  asking: number;
  /** 0: no quota. */
  limit: number;
}

/** The refusal when the project would hold more than its quota; null when it may. */
export function quotaRefusal(c: QuotaCheck): DomainError | null {
  if (c.limit === 0 || c.held + c.asking <= c.limit) return null;
  const what = c.asking > 0 ? `creating ${c.asking} more would take it past` : "that is past";
  return new DomainError(
    "QUOTA_EXCEEDED",
    `project ${c.projectId} holds ${c.held} accelerator requests; ${what} its quota of ${c.limit} (ARQ_QUOTA_PER_PROJECT): delete some first`,
    undefined,
    { projectId: c.projectId, resourceClass: "ARQS", held: c.held, asking: c.asking, limit: c.limit },
  );
}

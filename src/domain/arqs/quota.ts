/**
 * The per-project ARQ quota (ARQ_QUOTA_PER_PROJECT): the most ARQs a project may hold. Checked
 * as Nova checks its quotas: before creating (what the project holds plus what it asks for), and
 * again once the creation shows in the read models, so that two creations racing for the last
 * places cannot both stay (both may be undone: the check fails closed).
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
    { projectId: c.projectId, held: c.held, asking: c.asking, limit: c.limit },
  );
}

/** A project's quota: its limits (admin-set, over the service's defaults) and its usage, read from its quota stream. */
import { arqAmounts } from "../domain/quotas/amounts.js";
import { effectiveLimits, evolveQuota } from "../domain/quotas/decider.js";
import { DomainError, type CommandContext } from "../domain/shared/types.js";
import { backfillOnFirstUse, type ArqQuota } from "./arqs/quota.js";
import { aggregates, type Streams } from "./streams.js";

export interface ProjectQuotaView {
  projectId: string;
  /** Per resource class: its limit (null: counted, not limited), whether the project set it (else a default), and what its ARQs use. */
  classes: Array<{ resourceClass: string; limit: number | null; own: boolean; usage: number }>;
  /** ARQs holding a claim. */
  claims: number;
}

export async function projectQuota(s: Streams, quota: ArqQuota | undefined, projectId: string): Promise<ProjectQuotaView> {
  const loaded = (await s.load(aggregates.quota, projectId)).state;
  // Before its first use the stream does not count the project's earlier ARQs yet: shown as the backfill will count them.
  const state = !loaded.started && quota?.existing ? evolveQuota(loaded, { type: "QuotaBackfilled", data: { projectId, claims: (await quota.existing(projectId)).map((a) => ({ arqUuid: a.arqUuid, amounts: arqAmounts(a.group) })), at: "" } }) : loaded;
  const limits = effectiveLimits(state, quota?.defaults ?? {});
  const classes = [...new Set([...Object.keys(limits), ...Object.keys(state.usage)])].sort();
  return {
    projectId,
    classes: classes.map((resourceClass) => ({
      resourceClass,
      limit: limits[resourceClass] ?? null,
      own: resourceClass in state.limits,
      usage: state.usage[resourceClass] ?? 0,
    })),
    claims: state.claims.size,
  };
}

/** Sets a project's own limits (null: back to the default); admins only. */
export async function setProjectQuota(
  s: Streams,
  quota: ArqQuota | undefined,
  ctx: CommandContext,
  projectId: string,
  limits: ReadonlyArray<{ resourceClass: string; limit: number | null }>,
): Promise<ProjectQuotaView> {
  if (!ctx.isAdmin) throw new DomainError("FORBIDDEN", "only an administrator sets a project's quota");
  const byClass: Record<string, number | null> = {};
  for (const l of limits) byClass[l.resourceClass] = l.limit;
  // Limits set first would start the stream: the project's earlier ARQs are counted before.
  if (quota) await backfillOnFirstUse(s, quota, projectId, ctx);
  await s.handle(aggregates.quota, projectId, { type: "SetLimits", data: { projectId, limits: byClass, at: ctx.at } }, ctx);
  return projectQuota(s, quota, projectId);
}

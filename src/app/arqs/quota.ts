/** What creating ARQs needs to claim them against their project's quota (src/domain/quotas/decider.ts). */
import { arqAmounts } from "../../domain/quotas/amounts.js";
import type { QuotaState } from "../../domain/quotas/decider.js";
import type { QuotaEvent } from "../../domain/quotas/events.js";
import type { CommandContext } from "../../domain/shared/types.js";
import { aggregates, Decided, type Streams } from "../streams.js";

export interface ArqQuota {
  /**
   * The limits per resource class of a project that set none of its own for that class: `ARQS`
   * (the ARQ count) from ARQ_QUOTA_PER_PROJECT, the others from QUOTA_DEFAULTS. A class without
   * a limit is counted, not limited.
   */
  readonly defaults: Readonly<Record<string, number>>;
  /**
   * The project's live ARQs as the read side shows them, for the backfill of a project whose
   * quota stream does not exist yet (its ARQs were made before quotas counted them); none: no backfill.
   */
  readonly existing?: (projectId: string) => Promise<ReadonlyArray<{ arqUuid: string; group: Readonly<Record<string, string>> }>>;
}

/**
 * On the first use of a project's quota stream, claims the ARQs the project already has, as the
 * stream's first event (appended at "no stream": a concurrent first use decides again and finds
 * it done). Later uses find the stream started and read nothing. Called before the stream's lock
 * is taken (the backfill appends under it).
 */
export async function backfillOnFirstUse(s: Streams, quota: ArqQuota, projectId: string, ctx: CommandContext): Promise<void> {
  if (!quota.existing || (await s.load(aggregates.quota, projectId)).state.started) return;
  const claims = (await quota.existing(projectId)).map((a) => ({ arqUuid: a.arqUuid, amounts: arqAmounts(a.group) }));
  await s.handle(aggregates.quota, projectId, { type: "Backfill", data: { projectId, claims, at: ctx.at } }, ctx);
}

/** The project whose quota a creation counts against; null when none applies (admins and the compute service act for every project). */
export function quotaProject(quota: ArqQuota | undefined, ctx: CommandContext): string | null {
  if (!quota || ctx.isAdmin || !ctx.projectId) return null;
  return ctx.projectId;
}

/**
 * The claim of these ARQs on the project's quota stream, decided on the stream as it is now and to
 * be appended at its exact revision; none when every ARQ already holds its claim. Throws
 * QUOTA_EXCEEDED when a class would pass its limit.
 */
export async function decideClaim(
  s: Streams,
  projectId: string,
  arqs: ReadonlyArray<{ arqUuid: string; group: Readonly<Record<string, string>> }>,
  quota: ArqQuota,
  ctx: CommandContext,
): Promise<Decided<QuotaState, QuotaEvent> | null> {
  const loaded = await s.load(aggregates.quota, projectId);
  const claims = arqs.map((a) => ({ arqUuid: a.arqUuid, amounts: arqAmounts(a.group) }));
  const events = aggregates.quota.decider.decide({ type: "Claim", data: { projectId, claims, defaults: quota.defaults, at: ctx.at } }, loaded.state);
  return events.length === 0 ? null : new Decided(aggregates.quota, projectId, loaded, events);
}

/** Releases these ARQs' claims (those that hold one) on the project's quota stream. */
export async function releaseClaims(s: Streams, projectId: string, arqUuids: readonly string[], ctx: CommandContext): Promise<void> {
  await s.handle(aggregates.quota, projectId, { type: "Release", data: { projectId, arqUuids, at: ctx.at } }, ctx);
}

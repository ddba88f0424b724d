/** Unbinding and deleting ARQs, and freeing what they held: one plan each (release-plan.ts), appended as one sequence. */
import { isStaleFor } from "../../domain/instances/decider.js";
import type { ArqView } from "../../domain/arqs/view.js";
import { DomainError, stream, type CommandContext } from "../../domain/shared/types.js";
import { aggregates, type Streams } from "../streams.js";
import { removeUnusedInlineProfiles } from "../device-profiles.js";
import { appendPlan } from "./append-plan.js";
import { planRelease, type ReleasePlan, type ReleaseRequest, type Released } from "./release-plan.js";
import { loadVisible, uuidList, visibleTo } from "./shared.js";
import { liveArq } from "../../domain/arqs/decider.js";

export async function unbindArqs(s: Streams, ctx: CommandContext, arqUuids: string[]): Promise<ArqView[]> {
  const ids = uuidList(arqUuids, "arqUuids");
  const visible = await loadVisible(s, ctx, ids, (i) => `arqUuids[${i}]`);
  const plan = await release(s, ctx, { how: "unbind", arqUuids: ids }, visible.map((v) => v.arq));
  return ids.map((id) => plan.view(id)!);
}

export interface DeleteSelection {
  arqUuids?: string[] | null;
  instanceUuid?: string | null;
  /** A client's request (GraphQL or REST), not the service's own undo: its ARQs bound to an instance are the compute service's to delete. */
  caller?: { actsAsService: boolean };
}

/**
 * Deleting an ARQ bound to an instance is the compute service's alone (Cyborg hard-codes it beside
 * its policy, CVE-2026-40214). Checked after visibility: another project's ARQs are NOT_FOUND.
 */
function refuseBoundDelete(caller: { actsAsService: boolean }, arqs: ReadonlyArray<{ uuid: string; instanceUuid: string | null }>): void {
  if (caller.actsAsService) return;
  const bound = arqs.find((a) => a.instanceUuid !== null);
  if (bound) {
    throw new DomainError("FORBIDDEN", `This operation requires a service token: ARQ ${bound.uuid} is bound to instance ${bound.instanceUuid}; only the compute service deletes it.`);
  }
}

/**
 * By uuids: all must exist and be visible, else NOT_FOUND and nothing is deleted. By instance:
 * idempotent; the instance stream names every ARQ bound to it, even before read models catch up.
 */
export async function deleteArqs(s: Streams, ctx: CommandContext, sel: DeleteSelection): Promise<string[]> {
  const byUuids = sel.arqUuids !== undefined && sel.arqUuids !== null;
  const byInstance = sel.instanceUuid !== undefined && sel.instanceUuid !== null;
  if (byUuids === byInstance) throw new DomainError("BAD_USER_INPUT", "give exactly one of arqUuids and instanceUuid", "arqUuids");
  if (byUuids) {
    const ids = uuidList(sel.arqUuids, "arqUuids");
    // Run again under an idempotency key: ARQs the earlier attempt deleted count as deleted.
    const left = ctx.resuming ? await withoutDeleted(s, ids) : ids;
    const visible = await loadVisible(s, ctx, left, (i) => `arqUuids[${ids.indexOf(left[i]!)}]`);
    if (sel.caller) refuseBoundDelete(sel.caller, visible.map((v) => v.arq));
    if (left.length) await release(s, ctx, { how: "delete", arqUuids: left }, visible.map((v) => v.arq));
    return ids;
  }
  const instanceUuid = sel.instanceUuid!;
  if (typeof instanceUuid !== "string" || instanceUuid.length === 0) throw new DomainError("BAD_USER_INPUT", "an instance uuid is needed", "instanceUuid");
  const { state } = await s.load(aggregates.instance, instanceUuid);
  const arqs = await Promise.all(state.arqUuids.map((id) => s.load(aggregates.arq, id)));
  const stale: string[] = [];
  const doomed = state.arqUuids.filter((id, i) => {
    if (isStaleFor(instanceUuid, arqs[i]!.state)) stale.push(id);
    else return visibleTo(ctx, liveArq(arqs[i]!.state)!);
    return false;
  });
  // The instance lets go of stale ARQs and of listed ones never started (a bind still under way).
  const plan = await release(s, ctx, { how: "delete", arqUuids: doomed, instance: { instanceUuid, arqUuids: [...stale, ...doomed] } }, arqs.map((a) => liveArq(a.state)));
  return doomed.filter((id) => plan.view(id) === null);
}

/** Appends the release plan; the process's locks cover the ARQs, their hosts and instances as they stand now. */
async function release(s: Streams, ctx: CommandContext, req: ReleaseRequest, known: ReadonlyArray<{ hostname: string | null; instanceUuid: string | null; projectId: string | null } | null>) {
  const released: Released = { held: new Map(), committed: new Set() };
  const streams = [
    ...req.arqUuids.map(stream.arq),
    ...known.flatMap((a) => (a?.hostname ? [stream.host(a.hostname)] : [])),
    ...known.flatMap((a) => (a?.instanceUuid ? [stream.instance(a.instanceUuid)] : [])),
    ...(req.instance ? [stream.instance(req.instance.instanceUuid)] : []),
    // A delete releases the ARQs' claims: this process's creations in those projects wait for it
    // rather than refuse its release step again and again (its ARQs deleted, their claims held).
    ...(req.how === "delete" ? (await claimingProjects(s, req.arqUuids, known)).map(stream.quota) : []),
  ];
  const noteCommitted = (p: ReleasePlan) => {
    for (const st of p.arqSteps) if (st.result && st.events.length > 0) released.committed.add(st.id);
  };
  const plan = (await appendPlan(s, ctx, streams, () => planRelease(s, ctx, req, released), noteCommitted))!;
  if (req.how === "delete") await removeUnusedInlineProfiles(s, ctx, plan.profileSteps);
  return plan;
}

/**
 * The projects in which some of these ARQs hold a claim. An ARQ's claim is appended with its
 * creation (or by its project's first backfill, which the release plan guards against), and only
 * its release takes it back, so a project none of them claims in needs no lock: deletes there
 * (the compute service's ARQs claim nothing) do not wait for one another.
 */
async function claimingProjects(s: Streams, arqUuids: readonly string[], known: ReadonlyArray<{ projectId: string | null } | null>): Promise<string[]> {
  const projects = [...new Set(known.flatMap((a) => (a?.projectId ? [a.projectId] : [])))];
  const quotas = await Promise.all(projects.map((p) => s.load(aggregates.quota, p)));
  return projects.filter((_, i) => arqUuids.some((id) => quotas[i]!.state.claims.has(id)));
}

/** The ARQs that were not deleted already (an ARQ never created stays: the delete will say NOT_FOUND). */
async function withoutDeleted(s: Streams, ids: readonly string[]): Promise<string[]> {
  const loaded = await Promise.all(ids.map((id) => s.load(aggregates.arq, id)));
  return ids.filter((_, i) => loaded[i]!.revision < 0 || liveArq(loaded[i]!.state) !== null);
}

/** Unbinding and deleting ARQs, and freeing what they held. */
import { liveArq } from "../../domain/arqs/decider.js";
import type { ArqDeleted } from "../../domain/arqs/events.js";
import { arqView, type ArqView } from "../../domain/arqs/view.js";
import { isStaleFor } from "../../domain/instances/decider.js";
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import { releaseHandleForArq } from "../inventory.js";
import { aggregates, type Streams } from "../streams.js";
import { loadVisible, uuidList, visibleTo } from "./shared.js";

export async function unbindArqs(s: Streams, ctx: CommandContext, arqUuids: string[]): Promise<ArqView[]> {
  const ids = uuidList(arqUuids, "arqUuids");
  await loadVisible(s, ctx, ids, (i) => `arqUuids[${i}]`);
  const views: ArqView[] = [];
  const released = new Map<string, string[]>();
  for (const id of ids) {
    const r = await s.handle(aggregates.arq, id, { type: "UnbindArq", data: { arqUuid: id, at: ctx.at } }, ctx);
    const unbound = r.events.find((e) => e.type === "ArqUnbound");
    if (unbound?.type === "ArqUnbound") {
      const { previousHostname, previousInstanceUuid } = unbound.data;
      if (previousHostname) await releaseHandleForArq(s, ctx, previousHostname, id);
      if (previousInstanceUuid) released.set(previousInstanceUuid, [...(released.get(previousInstanceUuid) ?? []), id]);
    }
    views.push(arqView(liveArq(r.state)!, r.revision, r.position!));
  }
  for (const [instanceUuid, arqs] of released) {
    await s.handle(aggregates.instance, instanceUuid, { type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids: arqs, at: ctx.at } }, ctx);
  }
  return views;
}

/**
 * By uuids: all must exist and be visible, else NOT_FOUND and nothing is deleted. By instance:
 * idempotent; the instance stream names every ARQ bound to it, even before read models catch up.
 */
export async function deleteArqs(s: Streams, ctx: CommandContext, sel: { arqUuids?: string[] | null; instanceUuid?: string | null }): Promise<string[]> {
  const byUuids = sel.arqUuids !== undefined && sel.arqUuids !== null;
  const byInstance = sel.instanceUuid !== undefined && sel.instanceUuid !== null;
  if (byUuids === byInstance) throw new DomainError("BAD_USER_INPUT", "give exactly one of arqUuids and instanceUuid", "arqUuids");
  if (byUuids) {
    const ids = uuidList(sel.arqUuids, "arqUuids");
    await loadVisible(s, ctx, ids, (i) => `arqUuids[${i}]`);
    await deleteEach(s, ctx, ids);
    return ids;
  }
  const instanceUuid = sel.instanceUuid!;
  if (typeof instanceUuid !== "string" || instanceUuid.length === 0) throw new DomainError("BAD_USER_INPUT", "an instance uuid is needed", "instanceUuid");
  const { state } = await s.load(aggregates.instance, instanceUuid);
  const arqs = await Promise.all(state.arqUuids.map((id) => s.load(aggregates.arq, id)));
  const doomed: string[] = [];
  const stale: string[] = [];
  state.arqUuids.forEach((id, i) => {
    const arq = arqs[i]!.state;
    if (isStaleFor(instanceUuid, arq)) stale.push(id);
    else if (visibleTo(ctx, liveArq(arq)!)) doomed.push(id);
  });
  if (stale.length > 0) {
    await s.handle(aggregates.instance, instanceUuid, { type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids: stale, at: ctx.at } }, ctx);
  }
  const deleted = await deleteEach(s, ctx, doomed);
  // ARQs listed but never started (a bind still under way) hold no instance: release them too.
  await s.handle(aggregates.instance, instanceUuid, { type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids: doomed, at: ctx.at } }, ctx);
  return deleted;
}

/** Deletes each ARQ, then frees what it held: its handle, its instance, its place on the profile. */
async function deleteEach(s: Streams, ctx: CommandContext, ids: readonly string[]): Promise<string[]> {
  const deleted: ArqDeleted["data"][] = [];
  for (const id of ids) {
    const r = await s.handle(aggregates.arq, id, { type: "DeleteArq", data: { arqUuid: id, at: ctx.at } }, ctx);
    for (const e of r.events) if (e.type === "ArqDeleted") deleted.push(e.data);
  }
  const byInstance = new Map<string, string[]>();
  const byProfile = new Map<string, { name: string; profileUuid: string; arqUuids: string[] }>();
  for (const d of deleted) {
    if (d.previousHostname) await releaseHandleForArq(s, ctx, d.previousHostname, d.arqUuid);
    if (d.previousInstanceUuid) byInstance.set(d.previousInstanceUuid, [...(byInstance.get(d.previousInstanceUuid) ?? []), d.arqUuid]);
    const key = `${d.deviceProfileName}/${d.deviceProfileUuid}`;
    const entry = byProfile.get(key) ?? { name: d.deviceProfileName, profileUuid: d.deviceProfileUuid, arqUuids: [] };
    entry.arqUuids.push(d.arqUuid);
    byProfile.set(key, entry);
  }
  for (const [instanceUuid, arqUuids] of byInstance) {
    await s.handle(aggregates.instance, instanceUuid, { type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids, at: ctx.at } }, ctx);
  }
  for (const p of byProfile.values()) {
    await s.handle(aggregates.profile, p.name, { type: "RecordArqsDeleted", data: { ...p, at: ctx.at } }, ctx);
  }
  return deleted.map((d) => d.arqUuid);
}

/** The arqs read model's queries: ARQs by uuid, and filtered lists in creation order. */
import type { ArqView } from "../../src/domain/arqs/view.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { filterIndexes, pageOf, type Page } from "../shared/page.js";
import { FAMILIES, k, type StoredArq } from "./projection.js";

export interface ArqFilter {
  instanceUuid?: string | null;
  state?: string | null;
  hostname?: string | null;
  deviceProfileName?: string | null;
  projectId?: string | null;
  /** Only ARQs whose bind resolved: BOUND or BIND_FAILED. */
  resolvedOnly?: boolean | null;
}

function view(doc: Record<string, unknown> | null): ArqView | null {
  if (!doc) return null;
  const a = doc as unknown as StoredArq;
  const s = a.status;
  const handle = s.state === "BOUND" ? s.handle : null;
  const { revision: noticeRevision, position: noticePosition, ...eviction } = a.eviction ?? { revision: -1, position: "" };
  const noticeLast = a.eviction && noticeRevision > s.revision;
  return {
    ...a.created,
    // Docs written before profiles had versions.
    deviceProfileVersion: a.created.deviceProfileVersion ?? 1,
    state: s.state,
    hostname: a.binding?.hostname ?? null,
    deviceRpUuid: a.binding?.deviceRpUuid ?? null,
    instanceUuid: a.binding?.instanceUuid ?? null,
    projectId: a.projectId,
    attachHandleType: handle?.attachHandleType ?? null,
    attachHandleUuid: handle?.attachHandleUuid ?? null,
    attachHandleInfo: handle?.attachHandleInfo ?? null,
    deployableUuid: handle?.deployableUuid ?? null,
    alternative: handle?.alternative ?? null,
    bindFailureReason: s.bindFailureReason,
    eviction: a.eviction ? (eviction as NonNullable<ArqView["eviction"]>) : null,
    revision: noticeLast ? noticeRevision : s.revision,
    position: noticeLast ? noticePosition : s.position,
    createdAt: a.created.createdAt,
    updatedAt: noticeLast ? a.eviction!.requestedAt : s.updatedAt,
  };
}

export async function getArqs(store: ReadStore, uuids: readonly string[]): Promise<Array<ArqView | null>> {
  return (await store.getDocs(uuids.map((u) => k("arq", u)))).map(view);
}

/** ARQs in creation order; filters combine (AND). */
export async function listArqs(store: ReadStore, filter: ArqFilter, first: number, after?: string): Promise<Page<ArqView>> {
  const fields = ["instanceUuid", "hostname", "state", "deviceProfileName", "projectId", "resolved"] as const;
  const index = filterIndexes(k, FAMILIES, { ...filter, resolved: filter.resolvedOnly ? "yes" : null }, fields, "all");
  return pageOf(store, index, first, after, (u) => getArqs(store, u));
}

/** How many live ARQs a project holds (one round trip). */
export async function countProjectArqs(store: ReadStore, projectId: string): Promise<number> {
  const [index] = filterIndexes(k, FAMILIES, { projectId }, ["projectId"], "all");
  return (await store.count([index!]))[0]!;
}

/** Every live ARQ of a project (its uuid and group), page by page: what its quota backfill counts. */
export async function liveArqsOf(store: ReadStore, projectId: string): Promise<Array<{ arqUuid: string; group: Readonly<Record<string, string>> }>> {
  const out: Array<{ arqUuid: string; group: Readonly<Record<string, string>> }> = [];
  let after: string | undefined;
  for (;;) {
    const page = await listArqs(store, { projectId }, 500, after);
    for (const a of page.items) out.push({ arqUuid: a.uuid, group: a.group });
    if (!page.hasNextPage || page.cursors.length === 0) return out;
    after = page.cursors[page.cursors.length - 1];
  }
}

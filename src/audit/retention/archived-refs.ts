/** The audit index entries the archive holds for an object or a request (history and trace of archived events). */
import { objectKey, partsKey, requestKey } from "../../../projections/audit/projection.js";
import { parseEntry, type LogRef, type RefPage } from "../../../projections/audit/queries.js";
import type { ReadStore } from "../../infra/readstore/port.js";
import type { Archive } from "./archive.js";

export async function archivedObjectRefs(readStore: ReadStore, archive: Archive, uuid: string): Promise<LogRef[]> {
  const [parts] = await readStore.getMembers([partsKey(uuid)]);
  return toRefs(await archive.refs([uuid, ...(parts ?? [])].map(objectKey)));
}

export async function archivedRequestRefs(archive: Archive, correlationId: string): Promise<LogRef[]> {
  return toRefs(await archive.refs([requestKey(correlationId)]));
}

const toRefs = (members: readonly string[]): LogRef[] => [...new Set(members)].map(parseEntry);

/** The live index's page with the archive's entries after `after` merged in (the live index no longer holds them). */
export function withArchived(page: RefPage, archived: readonly LogRef[], first: number, after: bigint | undefined): RefPage {
  if (archived.length === 0) return page;
  const byPosition = new Map<bigint, LogRef>();
  for (const r of [...page.refs, ...archived.filter((r) => after === undefined || r.position > after)]) byPosition.set(r.position, r);
  const merged = [...byPosition.values()].sort((a, b) => (a.position < b.position ? -1 : 1));
  // The live page's entries are its first `first` after the cursor: beyond its last one, only archived ones are certain.
  const lastLive = page.hasNextPage ? page.refs.at(-1)?.position : undefined;
  const certain = lastLive === undefined ? merged : merged.filter((r) => r.position <= lastLive);
  return { refs: certain.slice(0, first), hasNextPage: page.hasNextPage || certain.length > first || certain.length < merged.length, totalCount: page.totalCount + archived.length };
}

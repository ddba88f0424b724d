/** The audit read model's queries: the log entries of one object (with its parts) or of one request. */
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { encodeCursor } from "../../src/infra/readstore/keys-and-cursors.js";
import { objectKey, partsKey, requestKey } from "./projection.js";

/** Where an event is: enough to read it back from the event store. */
export interface LogRef {
  position: bigint;
  revision: number;
  stream: string;
}

export interface RefPage {
  refs: LogRef[];
  hasNextPage: boolean;
  /** Entries of the whole history, not only this page. */
  totalCount: number;
}

export function parseEntry(member: string): LogRef {
  const a = member.indexOf(" ");
  const b = member.indexOf(" ", a + 1);
  return { position: BigInt(member.slice(0, a)), revision: Number(member.slice(a + 1, b)), stream: member.slice(b + 1) };
}

/**
 * The events that name the object, and (a device, a deployable) those that name its parts, in
 * log order, strictly after position `after`.
 */
export async function objectHistory(store: ReadStore, uuid: string, first: number, after?: bigint): Promise<RefPage> {
  const [parts] = await store.getMembers([partsKey(uuid)]);
  return union(store, [uuid, ...parts!].map(objectKey), first, after);
}

/** Everything one request caused (its correlation id), in log order. */
export function requestTrace(store: ReadStore, correlationId: string, first: number, after?: bigint): Promise<RefPage> {
  return union(store, [requestKey(correlationId)], first, after);
}

/** The object's entries up to `upTo` (inclusive), oldest first, at most `limit`: which streams it was in. */
export async function objectRefsUpTo(store: ReadStore, uuid: string, upTo: bigint, limit: number): Promise<LogRef[]> {
  const page = await store.range([objectKey(uuid)], { limit });
  return page.items.map((i) => parseEntry(i.member)).filter((r) => r.position <= upTo);
}

/** Members strictly after a position, whatever their member: members are ASCII, all below U+FFFF. */
const afterPosition = (p: bigint | undefined) => (p === undefined ? undefined : encodeCursor(Number(p), "\uffff"));

/** A page of the union of ordered indexes (one entry may sit in several), merged by position. */
async function union(store: ReadStore, indexKeys: readonly string[], first: number, after?: bigint): Promise<RefPage> {
  const cursor = afterPosition(after);
  const pages = await Promise.all(indexKeys.map((key) => store.range([key], { after: cursor, limit: first })));
  const seen = new Map<string, number>();
  for (const p of pages) for (const i of p.items) seen.set(i.member, i.score);
  const merged = [...seen].sort((a, b) => a[1] - b[1]);
  // Each index gave its first `first` entries: no entry left unread can come before the cut's last.
  const cut = merged.slice(0, first);
  const more = merged.length > first || pages.some((p) => p.hasMore);
  const totalCount = indexKeys.length === 1 ? pages[0]!.total : await unionSize(store, indexKeys);
  return { refs: cut.map(([m]) => parseEntry(m)), hasNextPage: more, totalCount };
}

async function unionSize(store: ReadStore, indexKeys: readonly string[]): Promise<number> {
  const members = await store.getMembers(indexKeys);
  return new Set(members.flat()).size;
}

import type { ReadStore } from "../../src/infra/readstore/port.js";

/** A page of a connection (the shape the GraphQL layer's connections take). */
export interface Page<T> {
  items: T[];
  /** One opaque cursor per item; pass the last one as `after` for the next page. */
  cursors: string[];
  hasNextPage: boolean;
  /** Size of the whole filtered list. */
  totalCount: number;
}

/** A page of an ordered index (or of the intersection of several), hydrated: two round trips. */
export async function pageOf<T>(
  store: ReadStore,
  indexKeys: readonly string[],
  first: number,
  after: string | undefined,
  load: (uuids: readonly string[]) => Promise<Array<T | null>>,
): Promise<Page<T>> {
  const range = await store.range(indexKeys, { after, limit: first });
  const loaded = await load(range.items.map((i) => i.member));
  const items: T[] = [];
  const cursors: string[] = [];
  // A member whose doc vanished between the two reads is skipped rather than returned as null.
  loaded.forEach((doc, i) => {
    if (doc) {
      items.push(doc);
      cursors.push(range.items[i]!.cursor);
    }
  });
  return { items, cursors, hasNextPage: range.hasMore, totalCount: range.total };
}

/**
 * The ordered indexes a filter selects, to page through their intersection: the family index of
 * each field it sets, in `fields` order (put the most selective first), or `all` when it sets none.
 */
export function filterIndexes<F extends string>(
  k: (part: string) => string,
  families: Readonly<Record<F, string>>,
  filter: Partial<Record<F, string | null>>,
  fields: readonly F[],
  all: string,
): string[] {
  const index: string[] = [];
  for (const f of fields) {
    const v = filter[f];
    if (v !== undefined && v !== null) index.push(k(`${families[f]}:${v}`));
  }
  return index.length ? index : [k(all)];
}

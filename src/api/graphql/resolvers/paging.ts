import { decodeCursor } from "../../../infra/readstore/keys-and-cursors.js";
import { badInput } from "../errors.js";

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;

/** `first` defaults to 100 and is capped at 1000 (the contract); negative is bad input. */
export function pageSize(first: number | null | undefined): number {
  if (first === null || first === undefined) return DEFAULT_PAGE;
  if (first < 0) throw badInput("first", "first must be zero or positive");
  return Math.min(first, MAX_PAGE);
}


/** `after` as the list it pages through gave it (`endCursor`, an edge's `cursor`); anything else is bad input. */
export function afterCursor(after: string | null | undefined): string | undefined {
  if (after === null || after === undefined) return undefined;
  try {
    decodeCursor(after);
  } catch {
    throw badInput("after", `after must be a cursor from the same list (its pageInfo.endCursor), got ${JSON.stringify(after.slice(0, 64))}`);
  }
  return after;
}

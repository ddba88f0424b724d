/**
 * The guard on list sizes: no list in an operation's arguments, written in the document or sent
 * in the variables, at any depth, holds more than the limit. Checked before the operation runs.
 */
import { BREAK, GraphQLError, Kind, visit, type DocumentNode } from "graphql";

/** A list longer than the limit: BAD_USER_INPUT naming the argument or input field that holds it. */
export const listTooLong = (list: LongList, limit: number) =>
  new GraphQLError(`${list.field} holds ${list.items} items; at most ${limit} a list (send fewer, in several requests)`, {
    extensions: { code: "BAD_USER_INPUT", field: list.field, items: list.items, limit, http: { status: 400 } },
  });

export interface LongList {
  items: number;
  /** The argument or input field that holds it. */
  field: string;
}

/**
 * The first array anywhere in the variables (plain JSON from the request) longer than `limit`,
 * with the name it is held under (a top-level variable: the argument it is passed to).
 * Iterative: nesting depth is the body's, not ours.
 */
export function longList(variables: Record<string, unknown> | null | undefined, limit: number, argumentOf: (variable: string) => string = (v) => v): LongList | undefined {
  // [value, the name it is held under, whether that name is a variable's]
  const pending: Array<[unknown, string, boolean]> = Object.entries(variables ?? {}).map(([name, v]) => [v, name, true]);
  while (pending.length > 0) {
    const [v, field, isVariable] = pending.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      if (v.length > limit) return { items: v.length, field: isVariable ? argumentOf(field) : field };
      for (const c of v) pending.push([c, field, isVariable]);
    } else for (const [k, c] of Object.entries(v)) pending.push([c, k, false]);
  }
  return undefined;
}

/** The first list literal in the document's arguments longer than `limit`. */
export function longLiteralList(doc: DocumentNode, limit: number): LongList | undefined {
  let found: LongList | undefined;
  visit(doc, {
    ListValue(node, _key, parent) {
      if (node.values.length <= limit) return undefined;
      const owner = parent as { kind?: string; name?: { value: string } } | undefined;
      found = { items: node.values.length, field: owner?.name?.value ?? "a list" };
      return BREAK;
    },
  });
  return found;
}

/** Which argument each variable of the document is passed to (the first use of each). */
export function argumentsOfVariables(doc: DocumentNode): (variable: string) => string {
  const names = new Map<string, string>();
  visit(doc, {
    Argument(node) {
      if (node.value.kind === Kind.VARIABLE && !names.has(node.value.name.value)) names.set(node.value.name.value, node.name.value);
    },
  });
  return (v) => names.get(v) ?? v;
}

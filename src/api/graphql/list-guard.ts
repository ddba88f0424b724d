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
 * Iterative: nesting depth is the body's, not ours. Every request's variables are walked (a host
 * report's hold thousands of objects), so the walk keeps only values; names are looked up on refusal.
 */
export function longList(variables: Record<string, unknown> | null | undefined, limit: number, argumentOf: (variable: string) => string = (v) => v): LongList | undefined {
  const long = firstLongArray(variables, limit);
  return long && { items: long.length, field: holderOf(variables!, long, argumentOf) };
}

function firstLongArray(value: unknown, limit: number): unknown[] | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      if (v.length > limit) return v;
      for (const c of v) pending.push(c);
    } else for (const k in v) pending.push((v as Record<string, unknown>)[k]);
  }
  return undefined;
}

/** The name `list` is held under: the input field's, or the argument a top-level variable is passed to. */
function holderOf(variables: Record<string, unknown>, list: unknown[], argumentOf: (variable: string) => string): string {
  // [value, the name it is held under, whether that name is a variable's]
  const pending: Array<[unknown, string, boolean]> = Object.entries(variables).map(([name, v]) => [v, name, true]);
  while (pending.length > 0) {
    const [v, field, isVariable] = pending.pop()!;
    if (v === list) return isVariable ? argumentOf(field) : field;
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) for (const c of v) pending.push([c, field, isVariable]);
    else for (const [k, c] of Object.entries(v)) pending.push([c, k, false]);
  }
  return "a list";
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

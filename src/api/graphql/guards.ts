import type { ApolloServerPlugin } from "@apollo/server";
import { BREAK, GraphQLError, Kind, visit, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from "graphql";
import { getVariableValues } from "graphql/execution/values.js";
import { getComplexity, simpleEstimator, type ComplexityEstimator } from "graphql-query-complexity";
import { argumentsOfVariables, listTooLong, longList, longLiteralList } from "./list-guard.js";

/**
 * What one operation may ask for. Every check fails closed: a document that cannot be measured
 * is refused. Parsing itself is bounded by `maxTokens` (graphql-js parse option) and the query's
 * length, before any of this runs.
 */
export interface GuardLimits {
  /** Characters of query text. */
  maxQueryChars: number;
  /** Brackets ({, [, () open at once in the query text: graphql-js parses recursively. */
  maxNesting: number;
  /** Lexical tokens of the query text (graphql-js stops parsing past it). */
  maxTokens: number;
  /** Field selections, aliases included, with fragments expanded. */
  maxFields: number;
  maxDepth: number;
  /** Depth for an operation that only introspects (GraphiQL's and codegen's queries are 15 deep). */
  maxIntrospectionDepth: number;
  maxComplexity: number;
  /** Items in any one list of an operation's arguments or variables, at any depth (JSON values included). */
  maxListItems: number;
}

export const DEFAULT_GUARDS: GuardLimits = {
  maxQueryChars: 100_000,
  maxNesting: 64,
  maxTokens: 20_000,
  maxFields: 2_000,
  maxDepth: 12,
  maxIntrospectionDepth: 20,
  maxComplexity: 1_000_000,
  // The largest list an operation needs: a host report of 1024 devices (tighter caps apply per argument).
  maxListItems: 1024,
};

/** QUERY_TOO_COMPLEX, answered with HTTP 400. */
export const tooComplex = (message: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code: "QUERY_TOO_COMPLEX", ...extensions, http: { status: 400 } } });

/** The refusal of a query text too long or too nested to parse, checked before it is parsed; undefined when within the limits. */
export function queryTextRefusal(query: unknown, limits: GuardLimits = DEFAULT_GUARDS): GraphQLError | undefined {
  if (typeof query !== "string") return undefined;
  if (query.length > limits.maxQueryChars) {
    return tooComplex(`the query is ${query.length} characters long; the limit is ${limits.maxQueryChars}`, { limit: limits.maxQueryChars });
  }
  if (nesting(query, limits.maxNesting) > limits.maxNesting) {
    return tooComplex(`the query nests more than ${limits.maxNesting} brackets deep`, { limit: limits.maxNesting });
  }
  return undefined;
}

/** How deep brackets nest in GraphQL text (strings, block strings and comments skipped); stops counting past `stopAbove`. */
export function nesting(text: string, stopAbove: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === '"') {
      const block = text.startsWith('"""', i);
      const end = block ? '"""' : '"';
      i += end.length;
      // Escapes: \x in a string, \""" in a block string.
      while (i < text.length && !text.startsWith(end, i)) i += block ? (text.startsWith('\\"""', i) ? 4 : 1) : text[i] === "\\" ? 2 : 1;
      i += end.length - 1;
    } else if (c === "{" || c === "[" || c === "(") {
      if (++depth > deepest && (deepest = depth) > stopAbove) return deepest;
    } else if (c === "}" || c === "]" || c === ")") {
      depth--;
    }
  }
  return deepest;
}

/** graphql-js stopped parsing at `maxTokens` (its message spells "more that"). */
export const isTokenLimit = (err: { message: string }) => /Document contains more th[ae]n \d+ tokens/.test(err.message);

const ROOTS = new Set(["Query", "Mutation", "Subscription"]);

/**
 * A list costs its children times the items it may hold: a connection or a list with `first`, that
 * page (default 100, at most 1000); another list, 100 at the root (deviceProfiles holds them all)
 * and 10 below (a device's deployables, a deployable's handles).
 */
const listEstimator: ComplexityEstimator = ({ type, args, field, childComplexity }) => {
  const first = typeof args.first === "number" ? Math.min(Math.max(args.first, 0), 1000) : undefined;
  const shape = field.type.toString();
  if (shape.endsWith("Connection!")) return 1 + childComplexity * (first ?? 100);
  if (!shape.includes("[")) return undefined;
  return 1 + childComplexity * (first ?? (ROOTS.has(type.name) ? 100 : 10));
};

interface Measure {
  fields: number;
  depth: number;
}

/** Fields and depth of a selection set, fragments expanded; each fragment is measured once (a fragment bomb costs nothing to count). */
function measure(set: SelectionSetNode | undefined, fragments: Map<string, FragmentDefinitionNode>, memo: Map<string, Measure>, open: Set<string>): Measure {
  const m: Measure = { fields: 0, depth: 0 };
  for (const s of set?.selections ?? []) {
    let inner: Measure;
    if (s.kind === Kind.FIELD) {
      const child = measure(s.selectionSet, fragments, memo, open);
      inner = { fields: 1 + child.fields, depth: 1 + child.depth };
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      inner = measure(s.selectionSet, fragments, memo, open);
    } else {
      const name = s.name.value;
      if (open.has(name)) continue; // a cycle (validation refuses it anyway)
      let known = memo.get(name);
      if (!known) {
        open.add(name);
        known = measure(fragments.get(name)?.selectionSet, fragments, memo, open);
        open.delete(name);
        memo.set(name, known);
      }
      inner = known;
    }
    m.fields += inner.fields;
    m.depth = Math.max(m.depth, inner.depth);
  }
  return m;
}

function operationsOf(doc: DocumentNode, operationName?: string | null): OperationDefinitionNode[] {
  return doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName));
}

function measureDocument(doc: DocumentNode, operationName?: string | null): Measure & { introspectionOnly: boolean } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const memo = new Map<string, Measure>();
  const total: Measure = { fields: 0, depth: 0 };
  let introspectionOnly = true;
  for (const op of operationsOf(doc, operationName)) {
    const m = measure(op.selectionSet, fragments, memo, new Set());
    total.fields += m.fields;
    total.depth = Math.max(total.depth, m.depth);
    introspectionOnly &&= op.selectionSet.selections.every((s) => s.kind === Kind.FIELD && s.name.value.startsWith("__"));
  }
  return { ...total, introspectionOnly };
}

/**
 * Whether an operation's cost can depend on its variables: a variable in a `first` argument (the
 * estimator reads it) or in a directive (`@include(if: $x)` prunes fields). Anything else in
 * the variables leaves depth and cost unchanged.
 */
export function costDependsOnVariables(doc: DocumentNode): boolean {
  let depends = false;
  visit(doc, {
    Argument(node, _key, _parent, _path, ancestors) {
      if (node.value.kind !== Kind.VARIABLE) return undefined;
      const owner = ancestors.at(-1);
      const inDirective = owner !== undefined && !Array.isArray(owner) && (owner as { kind?: string }).kind === Kind.DIRECTIVE;
      if (node.name.value === "first" || inDirective) {
        depends = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return depends;
}

/** Verdicts per document and operation, for documents whose cost the variables cannot change. */
const verdicts = new WeakMap<DocumentNode, Map<string, GraphQLError | null>>();

/**
 * Throws QUERY_TOO_COMPLEX for an operation that asks for too many fields, too deep, too costly,
 * or that cannot be scored. Variables that do not coerce are left to the executor, which refuses
 * them with BAD_USER_INPUT.
 *
 * Parsed documents are cached (Apollo's document store, the WebSocket DocumentCache), so the
 * verdict is kept per document object: measuring the cost coerces every variable, which for a
 * large input (a host's inventory report) cost as much as executing it.
 */
export function checkGuards(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  limits: GuardLimits = DEFAULT_GUARDS,
): void {
  // Lists in the variables are counted on every request: the verdict below is per document.
  const listed = longList(variables, limits.maxListItems, (v) => argumentsOfVariables(document)(v));
  if (listed) throw listTooLong(listed, limits.maxListItems);
  let perOperation = verdicts.get(document);
  if (perOperation === undefined && !costDependsOnVariables(document)) verdicts.set(document, (perOperation = new Map()));
  const key = `${operationName ?? ""}\u0000${JSON.stringify(limits)}`;
  const known = perOperation?.get(key);
  if (known !== undefined) {
    // A fresh error per request: the server annotates the errors it is given.
    if (known) throw new GraphQLError(known.message, { extensions: known.extensions });
    return;
  }
  const verdict = judge(schema, document, operationName, variables, limits);
  if (verdict !== undefined) perOperation?.set(key, verdict);
  if (verdict) throw verdict;
}

/** The refusal, null when within limits, undefined when the variables do not coerce (the executor refuses them). */
function judge(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  limits: GuardLimits,
): GraphQLError | null | undefined {
  const listed = longLiteralList(document, limits.maxListItems);
  if (listed) return listTooLong(listed, limits.maxListItems);
  const m = measureDocument(document, operationName);
  if (m.fields > limits.maxFields) {
    return tooComplex(`the query selects ${m.fields} fields (aliases and fragments counted); the limit is ${limits.maxFields}`, { fields: m.fields, limit: limits.maxFields });
  }
  const maxDepth = m.introspectionOnly ? limits.maxIntrospectionDepth : limits.maxDepth;
  if (m.depth > maxDepth) return tooComplex(`query depth ${m.depth} exceeds the limit of ${maxDepth}`, { depth: m.depth, limit: maxDepth });
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      operationName: operationName ?? undefined,
      variables: variables ?? {},
      estimators: [listEstimator, simpleEstimator({ defaultComplexity: 1 })],
    });
  } catch {
    const ops = operationsOf(document, operationName);
    const coerced = ops.length === 1 ? getVariableValues(schema, ops[0]!.variableDefinitions ?? [], variables ?? {}, { maxErrors: 1 }) : undefined;
    if (coerced?.errors) return undefined;
    return tooComplex("the query's cost could not be measured: refused");
  }
  if (cost > limits.maxComplexity) {
    return tooComplex(`query complexity ${cost} exceeds the limit of ${limits.maxComplexity}; ask for smaller pages or fewer aliases`, { complexity: cost, limit: limits.maxComplexity });
  }
  return null;
}

/** Refuses over-wide, over-deep and over-costly operations before any resolver runs (HTTP). */
export function guardPlugin(schema: GraphQLSchema, limits: GuardLimits = DEFAULT_GUARDS): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request, operation }) {
          if (operation?.operation === "subscription") {
            throw new GraphQLError("subscriptions are served over WebSocket at /graphql (the graphql-transport-ws protocol), not over HTTP", {
              extensions: { code: "BAD_REQUEST", http: { status: 400 } },
            });
          }
          checkGuards(schema, document, request.operationName, request.variables, limits);
        },
      };
    },
  };
}

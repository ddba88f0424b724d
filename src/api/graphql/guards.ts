import type { ApolloServerPlugin } from "@apollo/server";
import { BREAK, GraphQLError, Kind, visit, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type SelectionSetNode } from "graphql";
import { getComplexity, simpleEstimator, type ComplexityEstimator } from "graphql-query-complexity";

export interface GuardLimits {
  maxDepth: number;
  maxComplexity: number;
}

export const DEFAULT_GUARDS: GuardLimits = { maxDepth: 12, maxComplexity: 1_000_000 };

/** A list field costs its children times the page it asks for (`first`, default 100), or 10 for plain lists. */
const pageEstimator: ComplexityEstimator = ({ args, field, childComplexity }) => {
  const first = typeof args.first === "number" ? Math.min(Math.max(args.first, 0), 1000) : undefined;
  const isConnection = field.type.toString().endsWith("Connection!");
  if (isConnection) return 1 + childComplexity * (first ?? 100);
  const isList = field.type.toString().includes("[");
  return isList ? 1 + childComplexity * 10 : undefined;
};

function depth(set: SelectionSetNode | undefined, fragments: Map<string, FragmentDefinitionNode>, seen: Set<string>): number {
  if (!set) return 0;
  let max = 0;
  for (const s of set.selections) {
    if (s.kind === Kind.FIELD) max = Math.max(max, s.selectionSet ? 1 + depth(s.selectionSet, fragments, seen) : 1);
    else if (s.kind === Kind.INLINE_FRAGMENT) max = Math.max(max, depth(s.selectionSet, fragments, seen));
    else if (!seen.has(s.name.value)) {
      const f = fragments.get(s.name.value);
      max = Math.max(max, depth(f?.selectionSet, fragments, new Set([...seen, s.name.value])));
    }
  }
  return max;
}

export function queryDepth(doc: DocumentNode, operationName?: string | null): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  let max = 0;
  for (const d of doc.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    if (operationName && d.name?.value !== operationName) continue;
    max = Math.max(max, depth(d.selectionSet, fragments, new Set()));
  }
  return max;
}

/**
 * Whether an operation's cost can depend on its variables: a variable in a `first` argument (the
 * page estimator reads it) or in a directive (`@include(if: $x)` prunes fields). Anything else in
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

/** Depth and cost per document and operation, for documents whose cost the variables cannot change. */
const verdicts = new WeakMap<DocumentNode, Map<string, GraphQLError | null>>();

/**
 * Throws QUERY_TOO_COMPLEX for an over-deep or over-costly operation. Variables that do not coerce
 * are left to the executor, which refuses them with BAD_USER_INPUT.
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
  let perOperation = verdicts.get(document);
  if (perOperation === undefined && !costDependsOnVariables(document)) verdicts.set(document, (perOperation = new Map()));
  const key = `${operationName ?? ""}\u0000${limits.maxDepth}\u0000${limits.maxComplexity}`;
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

/** The refusal, null when within limits, undefined when the cost could not be measured (bad variables). */
function judge(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  limits: GuardLimits,
): GraphQLError | null | undefined {
  const d = queryDepth(document, operationName);
  if (d > limits.maxDepth) {
    return new GraphQLError(`query depth ${d} exceeds the limit of ${limits.maxDepth}`, {
      extensions: { code: "QUERY_TOO_COMPLEX", depth: d, limit: limits.maxDepth },
    });
  }
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      operationName: operationName ?? undefined,
      variables: variables ?? {},
      estimators: [pageEstimator, simpleEstimator({ defaultComplexity: 1 })],
    });
  } catch {
    return undefined;
  }
  if (cost > limits.maxComplexity) {
    return new GraphQLError(`query complexity ${cost} exceeds the limit of ${limits.maxComplexity}; ask for smaller pages`, {
      extensions: { code: "QUERY_TOO_COMPLEX", complexity: cost, limit: limits.maxComplexity },
    });
  }
  return null;
}

/** Refuses over-deep and over-costly operations before any resolver runs (HTTP). */
export function guardPlugin(schema: GraphQLSchema, limits: GuardLimits = DEFAULT_GUARDS): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request }) {
          checkGuards(schema, document, request.operationName, request.variables, limits);
        },
      };
    },
  };
}

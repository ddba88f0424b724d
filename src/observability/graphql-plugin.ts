/**
 * One Apollo plugin for what an operator sees of each GraphQL operation over HTTP: its count and
 * latency by root field and result code (metrics), the request's span named after it (tracing),
 * and the correlation id for the log line of an internal error.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { Kind, type GraphQLSchema, type OperationDefinitionNode } from "graphql";
import type { Metrics } from "./metrics.js";
import { CORRELATION_ATTRIBUTE, type Tracing } from "./tracing.js";

interface WithCorrelation {
  correlationId: string;
}

/** Root field names of the schema: the only values the `operation` label takes (and "other"). */
function rootFields(schema: GraphQLSchema): Set<string> {
  const names = new Set<string>(["__schema", "__type", "__typename"]);
  for (const t of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    for (const f of Object.keys(t?.getFields() ?? {})) names.add(f);
  }
  return names;
}

function rootField(op: OperationDefinitionNode | undefined, known: Set<string>): string {
  const first = op?.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
  if (!first || first.kind !== Kind.FIELD) return op ? "other" : "invalid";
  return known.has(first.name.value) ? first.name.value : "other";
}

export interface OperationsPluginOptions {
  schema: GraphQLSchema;
  metrics?: Metrics;
  tracing?: Tracing;
}

/**
 * The plugin, and `correlationOf(error)`: the correlation id of the request an error came from
 * (formatError, which logs internal errors, does not see the request; `didEncounterErrors`, which
 * runs just before it, does).
 */
export function operationsPlugin(o: OperationsPluginOptions): { plugin: ApolloServerPlugin<WithCorrelation>; correlationOf(err: unknown): string | undefined } {
  const known = rootFields(o.schema);
  const correlation = new WeakMap<object, string>();
  const plugin: ApolloServerPlugin<WithCorrelation> = {
    async requestDidStart() {
      const t0 = performance.now();
      let operation = "invalid";
      let type = "unknown";
      return {
        async didResolveOperation({ operation: op, contextValue }) {
          operation = rootField(op, known);
          type = op?.operation ?? "unknown";
          if (o.tracing) {
            const span = o.tracing.current(contextValue.correlationId);
            span?.updateName(`graphql ${type} ${operation}`);
            span?.setAttributes({ "graphql.operation.type": type, "graphql.operation.name": operation, [CORRELATION_ATTRIBUTE]: contextValue.correlationId });
          }
        },
        async didEncounterErrors({ errors, contextValue }) {
          for (const e of errors) correlation.set(e.originalError ?? e, contextValue.correlationId);
        },
        async willSendResponse({ response }) {
          if (!o.metrics) return;
          const errors = response.body.kind === "single" ? response.body.singleResult.errors : undefined;
          const code = errors?.length ? String(errors[0]!.extensions?.code ?? "INTERNAL_SERVER_ERROR") : "OK";
          o.metrics.graphqlOperation(operation, type, code, (performance.now() - t0) / 1000);
        },
      };
    },
  };
  return { plugin, correlationOf: (err) => (typeof err === "object" && err !== null ? correlation.get(err) : undefined) };
}

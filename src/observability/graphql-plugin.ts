/**
 * One Apollo plugin for what an operator sees of each GraphQL operation over HTTP: its count and
 * latency by root field and result code (metrics), the request's span named after it (tracing),
 * and the correlation id for the log line of an internal error.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { Kind, type GraphQLError, type GraphQLFormattedError, type GraphQLSchema, type OperationDefinitionNode } from "graphql";
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

/** One operation as it goes: resolved to its root field, its errors seen, its answer sent. */
export interface ObservedOperation {
  resolved(op: OperationDefinitionNode | null | undefined, correlationId: string): void;
  erred(errors: readonly GraphQLError[], correlationId: string): void;
  sent(errors: readonly GraphQLFormattedError[] | undefined): void;
}

/**
 * The plugin; `observe()`, the same for an operation run without Apollo's pipeline
 * (api/graphql/direct-operation.ts); and `correlationOf(error)`: the correlation id of the request
 * an error came from (formatError, which logs internal errors, does not see the request;
 * `didEncounterErrors`, which runs just before it, does).
 */
export function operationsPlugin(o: OperationsPluginOptions): {
  plugin: ApolloServerPlugin<WithCorrelation>;
  observe(): ObservedOperation;
  correlationOf(err: unknown): string | undefined;
} {
  const known = rootFields(o.schema);
  const correlation = new WeakMap<object, string>();
  const observe = (): ObservedOperation => {
    const t0 = performance.now();
    let operation = "invalid";
    let type = "unknown";
    return {
      resolved(op, correlationId) {
        operation = rootField(op ?? undefined, known);
        type = op?.operation ?? "unknown";
        if (o.tracing) {
          const span = o.tracing.current(correlationId);
          span?.updateName(`graphql ${type} ${operation}`);
          span?.setAttributes({ "graphql.operation.type": type, "graphql.operation.name": operation, [CORRELATION_ATTRIBUTE]: correlationId });
        }
      },
      erred(errors, correlationId) {
        for (const e of errors) correlation.set(e.originalError ?? e, correlationId);
      },
      sent(errors) {
        if (!o.metrics) return;
        const code = errors?.length ? String(errors[0]!.extensions?.code ?? "INTERNAL_SERVER_ERROR") : "OK";
        o.metrics.graphqlOperation(operation, type, code, (performance.now() - t0) / 1000);
      },
    };
  };
  const plugin: ApolloServerPlugin<WithCorrelation> = {
    async requestDidStart() {
      const observed = observe();
      return {
        async didResolveOperation({ operation, contextValue }) {
          observed.resolved(operation, contextValue.correlationId);
        },
        async didEncounterErrors({ errors, contextValue }) {
          observed.erred(errors, contextValue.correlationId);
        },
        async willSendResponse({ response }) {
          observed.sent(response.body.kind === "single" ? response.body.singleResult.errors : undefined);
        },
      };
    },
  };
  return { plugin, observe, correlationOf: (err) => (typeof err === "object" && err !== null ? correlation.get(err) : undefined) };
}

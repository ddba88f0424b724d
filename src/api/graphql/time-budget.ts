/**
 * A per-request execution time budget (REQUEST_TIMEOUT_S): every resolver checks the request's
 * deadline before it runs, so a request past its budget stops at its next field, answers `TIMEOUT`
 * (HTTP 503 with Retry-After) and takes no more of the process's time from others and from the
 * health checks. The guards bound what one step can cost; the budget bounds how many steps run.
 * Subscriptions live as long as their client wants: their events are not timed. A mutation is
 * checked before it runs, never once it has written (its answer's fields are not timed).
 */
import { GraphQLError, isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from "graphql";
import type { ApiContext } from "./context.js";

export const TIMEOUT_CODE = "TIMEOUT";

export function timedOut(budgetMs: number): GraphQLError {
  return new GraphQLError(
    `the request ran past its time budget of ${budgetMs / 1000} s (REQUEST_TIMEOUT_S) and was stopped; ask for less (smaller pages, fewer aliases or fields) or ask again later`,
    { extensions: { code: TIMEOUT_CODE } },
  );
}

/** Wraps every field resolver of the query and mutation types and the object types below them. */
export function withTimeBudget(schema: GraphQLSchema): GraphQLSchema {
  const subscription = schema.getSubscriptionType();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__") || type === subscription) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve = field.resolve as GraphQLFieldResolver<unknown, ApiContext> | undefined;
      if (!resolve) continue;
      const timed = type === schema.getQueryType() || type === schema.getMutationType() ? () => true : (op: string) => op === "query";
      field.resolve = (source, args, ctx, info) => {
        if (ctx.deadline !== undefined && Date.now() > ctx.deadline && timed(info.operation.operation)) throw timedOut(ctx.services.requestTimeoutMs!);
        return resolve(source, args, ctx, info);
      };
    }
  }
  return schema;
}

/**
 * Idempotency keys for GraphQL mutations: `Idempotency-Key` (HTTP header) or
 * `extensions.idempotencyKey` (the request body, or a WebSocket subscribe message) makes the
 * request's mutation run under the key (Application.idempotent): a retry after a lost answer gets
 * the first answer and writes nothing. One key covers one mutation field per request.
 */
import type { GraphQLFieldResolver, GraphQLResolveInfo, GraphQLSchema } from "graphql";
import type { Application } from "../../app/application.js";
import type { CommandContext } from "../../domain/shared/types.js";
import { badInput } from "./errors.js";
import { commandContext, type ApiContext } from "./context.js";

/** Wraps every Mutation field's resolver (queries are not touched: no cost where no key can apply). */
export function withIdempotencyKeys(schema: GraphQLSchema): GraphQLSchema {
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) {
    const resolve = field.resolve as GraphQLFieldResolver<unknown, ApiContext>;
    field.resolve = async (source: unknown, args: Record<string, unknown>, ctx: ApiContext, info: GraphQLResolveInfo) => {
      if (ctx.idempotencyKey === undefined || !ctx.principal) return resolve(source, args, ctx, info);
      if (ctx.keyedMutation) throw badInput("idempotencyKey", "an Idempotency-Key covers one mutation: send one mutation field per request");
      ctx.keyedMutation = info.fieldName;
      const request = { key: ctx.idempotencyKey as string, operation: info.fieldName, request: { mutation: info.fieldName, args }, ttlMs: ctx.services.idempotencyTtlMs };
      const { answer } = await ctx.services.app.idempotent(commandContext(ctx), request, (app: Application, keyed: CommandContext) => {
        ctx.services = { ...ctx.services, app };
        ctx.resuming = keyed.resuming;
        return Promise.resolve(resolve(source, args, ctx, info));
      });
      return answer;
    };
  }
  return schema;
}

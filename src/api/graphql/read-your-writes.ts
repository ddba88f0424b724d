/**
 * Every Mutation field answers after the read models show its write (api/read-your-writes.ts). It
 * wraps the field's own resolver, inside the idempotency key's run (idempotency.ts), so the answer
 * recorded under a key is the one read after the wait, and a retry replays it without waiting. A
 * field that writes nothing says so with `@Extensions({ writesNothing: true })` and answers at once.
 */
import type { GraphQLFieldResolver, GraphQLSchema } from "graphql";
import { afterCatchUp } from "../read-your-writes.js";
import type { ApiContext } from "./context.js";

export function withReadYourWrites(schema: GraphQLSchema): GraphQLSchema {
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) {
    if (field.extensions.writesNothing === true) continue;
    const resolve = field.resolve as GraphQLFieldResolver<unknown, ApiContext>;
    field.resolve = (source, args, ctx, info) => afterCatchUp(() => ctx.services.catchUp(), () => resolve(source, args, ctx, info));
  }
  return schema;
}

import { Arg, Authorized, Ctx, Query, Resolver } from "type-graphql";
import { listResourceProviders } from "../../../../projections/resource-providers/queries.js";
import type { ApiContext } from "../context.js";
import { ResourceProvider } from "../types/resource-provider.type.js";

@Resolver(() => ResourceProvider)
export class ResourceProviderResolver {
  @Authorized("resource_provider:read")
  @Query(() => [ResourceProvider], { description: "Deployables as Placement sees them, optionally for one host" })
  resourceProviders(@Ctx() ctx: ApiContext, @Arg("hostname", () => String, { nullable: true }) hostname?: string) {
    return listResourceProviders(ctx.services.readStore, hostname ?? undefined);
  }
}

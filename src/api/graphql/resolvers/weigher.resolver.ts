import { Arg, Authorized, Ctx, Query, Resolver } from "type-graphql";
import type { ApiContext } from "../context.js";
import { HostWeight } from "../types/host-weight.type.js";
import { hostWeights } from "../../weigher.js";

@Resolver()
export class WeigherResolver {
  @Authorized("resource_provider:read")
  @Query(() => [HostWeight], {
    description:
      "Hosts ranked for a device profile by what they can still give it: hosts that fit first, then free handles on regions already " +
      "running the needed function, then free handles; `hosts` (at most 1000): only these, each answered; none: every host with providers",
  })
  hostWeights(
    @Ctx() ctx: ApiContext,
    @Arg("deviceProfileName", () => String) deviceProfileName: string,
    @Arg("hosts", () => [String], { nullable: true }) hosts?: string[] | null,
  ) {
    return hostWeights(ctx.services.readStore, deviceProfileName, hosts);
  }
}

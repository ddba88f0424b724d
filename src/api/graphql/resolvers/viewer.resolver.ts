import { Ctx, Query, Resolver } from "type-graphql";
import { allows, POLICY, type Rule } from "../../auth/policy.js";
import type { ApiContext } from "../context.js";
import { unauthenticated } from "../errors.js";
import { Viewer } from "../types/viewer.type.js";

@Resolver(() => Viewer)
export class ViewerResolver {
  @Query(() => Viewer, { description: "Who the token is: any valid token may ask" })
  viewer(@Ctx() ctx: ApiContext): Viewer {
    const p = ctx.principal;
    if (!p) throw unauthenticated();
    return {
      principal: p.principal,
      roles: [...p.roles],
      projectId: p.projectId,
      hostname: p.hostname,
      allows: (Object.keys(POLICY) as Rule[]).filter((r) => allows(p, r)),
    };
  }
}

import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from "type-graphql";
import { seesAllProjects } from "../../auth/policy.js";
import { forbidden } from "../errors.js";
import { commandContext, type ApiContext } from "../context.js";
import { ProjectQuota, QuotaLimitInput } from "../types/project-quota.type.js";

@Resolver()
export class QuotaResolver {
  @Authorized("arq:read")
  @Query(() => ProjectQuota, { description: "A project's quota limits and usage; a project's tokens read their own, admins and the compute service any" })
  projectQuota(@Ctx() ctx: ApiContext, @Arg("projectId", () => String) projectId: string) {
    const p = ctx.principal!;
    if (!seesAllProjects(p) && p.projectId !== projectId) throw forbidden("Query.projectQuota of another project");
    return ctx.services.app.projectQuota(projectId);
  }

  @Authorized("quota:write")
  @Mutation(() => ProjectQuota, { description: "Sets a project's own limits per resource class (a null limit: back to the default); admins only" })
  setProjectQuota(
    @Ctx() ctx: ApiContext,
    @Arg("projectId", () => String) projectId: string,
    @Arg("limits", () => [QuotaLimitInput]) limits: QuotaLimitInput[],
  ) {
    return ctx.services.app.setProjectQuota(commandContext(ctx), projectId, limits);
  }
}

import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import { canSeeArq } from "../../auth/policy.js";
import type { ApiContext } from "../context.js";
import type { AttachHandleView } from "../../../../projections/device-tree/queries.js";
import { AcceleratorRequest } from "../types/accelerator-request.type.js";
import { AttachHandle } from "../types/deployable.type.js";

@Resolver(() => AttachHandle)
export class AttachHandleResolver {
  @FieldResolver(() => AcceleratorRequest, { nullable: true, description: "The ARQ holding this handle" })
  async acceleratorRequest(@Root() h: AttachHandleView, @Ctx() ctx: ApiContext) {
    if (!h.arqUuid) return null;
    const arq = await ctx.loaders.arq.load(h.arqUuid);
    // Project isolation holds here too: another project's ARQ is not shown.
    if (!arq || !canSeeArq(ctx.principal!, arq.projectId)) return null;
    return arq;
  }
}

import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import { canSeeArq } from "../../auth/policy.js";
import type { ApiContext } from "../context.js";
import type { AttachHandleView } from "../../../../projections/device-tree/queries.js";
import { AcceleratorRequest } from "../types/accelerator-request.type.js";
import { AttachHandle } from "../types/deployable.type.js";
import { PastQueries } from "../../../audit/past-queries.js";
import { isPast } from "../../../audit/past-views.js";

@Resolver(() => AttachHandle)
export class AttachHandleResolver {
  @FieldResolver(() => AcceleratorRequest, { nullable: true, description: "The ARQ holding this handle" })
  async acceleratorRequest(@Root() h: AttachHandleView, @Ctx() ctx: ApiContext) {
    if (!h.arqUuid) return null;
    // A handle of a past device: the ARQ as it was at the same point.
    const arq = isPast(h) ? await new PastQueries(ctx.services.auditStore ?? ctx.services.store, ctx.services.readStore).arq(h.arqUuid, h.past.point) : await ctx.loaders.arq.load(h.arqUuid);
    // Project isolation holds here too: another project's ARQ is not shown.
    if (!arq || !canSeeArq(ctx.principal!, arq.projectId)) return null;
    return arq;
  }
}

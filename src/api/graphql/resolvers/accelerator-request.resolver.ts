import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { attachTargetOf } from "../../../domain/device-profiles/attach-target.js";
import { listArqs } from "../../../../projections/arqs/queries.js";
import type { ArqView } from "../../../domain/arqs/view.js";
import { allows, arqProjectScope, canSeeArq, seesAllProjects } from "../../auth/policy.js";
import { commandContext, type ApiContext } from "../context.js";
import { checkArqList } from "../../../app/request-limits.js";
import { badInput, forbidden } from "../errors.js";
import { ArqBindingInput, PlugProviderInput } from "../inputs/arq.input.js";
import { ArqFilter } from "../inputs/filters.input.js";
import { AcceleratorRequest, AcceleratorRequestConnection, ArqBindEvent, ArqEvictionEvent } from "../types/accelerator-request.type.js";
import { AttachTarget, JSONScalar } from "../types/scalars.js";
import { toConnection } from "../types/connection.js";
import { boundEvents, type BoundEventPayload } from "./bound-events.js";
import { evictedEvents, type EvictedEventPayload } from "./evicted-events.js";
import { afterCursor, pageSize } from "./paging.js";
import { AS_OF, pastOf } from "./past.js";
import { explainingRefusal } from "../../arq-explanation.js";

@Resolver(() => AcceleratorRequest)
export class AcceleratorRequestResolver {
  @FieldResolver(() => AttachTarget)
  attachTarget(@Root() arq: Pick<ArqView, "group">): string {
    return attachTargetOf(arq.group ?? {});
  }

  @Authorized("arq:read")
  @Query(() => AcceleratorRequestConnection, { description: "Your project's ARQs (all projects for admin and service)" })
  async acceleratorRequests(
    @Ctx() ctx: ApiContext,
    @Arg("filter", () => ArqFilter, { nullable: true }) filter?: ArqFilter,
    @Arg("first", () => Int, { nullable: true }) first?: number,
    @Arg("after", () => String, { nullable: true }) after?: string,
    @Arg("asOf", () => String, { ...AS_OF, description: `${AS_OF.description} (with filter.instanceUuid)` }) asOf?: string,
  ) {
    const past = pastOf(ctx, asOf);
    if (past) return toConnection(await past.arqs({ ...filter }, pageSize(first), afterCursor(after), asOf!));
    const p = ctx.principal!;
    const scoped = { ...filter, projectId: arqProjectScope(p) };
    return toConnection(await listArqs(ctx.services.readStore, scoped, pageSize(first), afterCursor(after)));
  }

  @Authorized("arq:read")
  @Query(() => AcceleratorRequest, { nullable: true })
  async acceleratorRequest(@Ctx() ctx: ApiContext, @Arg("uuid", () => ID) uuid: string, @Arg("asOf", () => String, AS_OF) asOf?: string) {
    const past = pastOf(ctx, asOf);
    if (past) return past.arq(uuid, asOf!);
    return visible(ctx, await ctx.loaders.arq.load(uuid));
  }

  @Authorized("arq:create")
  @Mutation(() => [AcceleratorRequest], { description: "One ARQ per accelerator the profile's groups ask for" })
  async createAcceleratorRequests(
    @Ctx() ctx: ApiContext,
    @Arg("deviceProfileName", () => String) deviceProfileName: string,
    @Arg("groupIndex", () => Int, { nullable: true }) groupIndex?: number,
    @Arg("projectId", () => String, { nullable: true, description: "Admin and service only: the project to create for" })
    projectId?: string,
  ) {
    const cmd = creationContext(ctx, projectId);
    return ctx.services.app.createArqs(cmd, { deviceProfileName, groupIndex: groupIndex ?? null });
  }

  @Authorized("arq:create_inline")
  @Mutation(() => [AcceleratorRequest], {
    description:
      "One ARQ per accelerator inline groups (a flavor's resources:/trait:/accel: keys) ask for; the groups are validated as a " +
      "device profile's and stand for a profile named after them (inline-<hash>), made on first use",
  })
  async createAcceleratorRequestsForGroups(
    @Ctx() ctx: ApiContext,
    @Arg("groups", () => [JSONScalar]) groups: unknown[],
    @Arg("projectId", () => String, { nullable: true, description: "The project to create for (default: the token's)" }) projectId?: string,
  ) {
    const cmd = creationContext(ctx, projectId);
    return ctx.services.app.createArqsForGroups(cmd, structuredClone(groups));
  }

  @Authorized("arq:bind")
  @Mutation(() => [AcceleratorRequest], {
    description:
      "Starts the binds and returns at once, with the ARQs in BIND_STARTED or already resolved; one acceleratorRequestBound event per ARQ follows",
  })
  async bindAcceleratorRequests(
    @Ctx() ctx: ApiContext,
    @Arg("bindings", () => [ArqBindingInput]) bindings: ArqBindingInput[],
  ) {
    const given = structuredClone(bindings);
    return explainingRefusal(ctx.services.app, ctx.services.readStore, given, () => ctx.services.app.startBinds(commandContext(ctx), given, { allocate: ctx.services.bindInline }));
  }

  @Authorized("arq:bind")
  @Mutation(() => [AcceleratorRequest], {
    description:
      "os-acc's plug in one call: creates the ARQs (a device profile by name, or inline groups) and binds them to the instance on the " +
      "providers (one per request group, in group order, or one for all). Answers as bindAcceleratorRequests does: ARQs BOUND with " +
      "their handles, or BIND_STARTED, whose acceleratorRequestBound events follow. A refused bind deletes the ARQs the call created",
  })
  async createAndBindAcceleratorRequests(
    @Ctx() ctx: ApiContext,
    @Arg("instanceUuid", () => ID) instanceUuid: string,
    @Arg("providers", () => [PlugProviderInput]) providers: PlugProviderInput[],
    @Arg("deviceProfileName", () => String, { nullable: true }) deviceProfileName?: string,
    @Arg("groups", () => [JSONScalar], { nullable: true, description: "Inline groups instead of a profile (needs arq:create_inline)" }) groups?: unknown[],
    @Arg("projectId", () => String, { nullable: true, description: "Admin and service only: the project to create for" }) projectId?: string,
  ) {
    const p = ctx.principal!;
    // Binding is the compute service's; it creates too (each rule is checked, should the policy change).
    if (!allows(p, "arq:create")) throw forbidden("Mutation.createAndBindAcceleratorRequests (needs arq:create)");
    if ((deviceProfileName != null) === (groups != null)) throw badInput("deviceProfileName", "give exactly one of deviceProfileName and groups");
    if (groups && !allows(p, "arq:create_inline")) throw forbidden("Mutation.createAndBindAcceleratorRequests with inline groups (needs arq:create_inline)");
    const cmd = creationContext(ctx, projectId);
    const spec = groups ? { groups: structuredClone(groups) } : { deviceProfileName: deviceProfileName! };
    const target = { instanceUuid, providers: structuredClone(providers) };
    return ctx.services.app.createAndBindArqs(cmd, spec, target, { allocate: ctx.services.bindInline });
  }

  @Authorized("arq:bind")
  @Mutation(() => [AcceleratorRequest], { description: "Unbinds from any state and releases the attach handles" })
  async unbindAcceleratorRequests(@Ctx() ctx: ApiContext, @Arg("arqUuids", () => [ID]) arqUuids: string[]) {
    checkArqList("arqUuids", arqUuids);
    return ctx.services.app.unbindArqs(commandContext(ctx), arqUuids);
  }

  @Authorized("arq:delete")
  @Mutation(() => [ID], { description: "By uuids (all or nothing) or by instance (service only, idempotent)" })
  async deleteAcceleratorRequests(
    @Ctx() ctx: ApiContext,
    @Arg("arqUuids", () => [ID], { nullable: true }) arqUuids?: string[],
    @Arg("instanceUuid", () => ID, { nullable: true }) instanceUuid?: string,
  ) {
    const p = ctx.principal!;
    if (Boolean(arqUuids) === Boolean(instanceUuid)) throw badInput("arqUuids", "give exactly one of arqUuids and instanceUuid");
    if (instanceUuid && !p.roles.has("service")) throw forbidden("deleting by instance (requires the service role)");
    if (arqUuids) checkArqList("arqUuids", arqUuids);
    return ctx.services.app.deleteArqs(commandContext(ctx), { arqUuids, instanceUuid, caller: { actsAsService: p.roles.has("service") } });
  }

  @Subscription(() => ArqBindEvent, {
    description:
      "accelerator-request-bound: one event per ARQ per bind, after the read models show it; " +
      "ARQs already resolved when you subscribe (named by instanceUuid or arqUuids) are sent at once",
    subscribe: ({ args, context }) => boundEvents(context as ApiContext, args as { instanceUuid?: string; arqUuids?: string[] }),
  })
  acceleratorRequestBound(
    @Root() payload: BoundEventPayload,
    @Arg("instanceUuid", () => ID, { nullable: true }) _instanceUuid?: string,
    @Arg("arqUuids", () => [ID], { nullable: true }) _arqUuids?: string[],
  ): BoundEventPayload {
    return payload;
  }

  @Subscription(() => ArqEvictionEvent, {
    description:
      "accelerator-request-evicted: each eviction notice as it is given (a NoExecute taint on the device the ARQ holds), " +
      "after the read models show it; notices still outstanding on the ARQs named (by arqUuid or instanceUuid) are sent at once",
    subscribe: ({ args, context }) => evictedEvents(context as ApiContext, args as { instanceUuid?: string; arqUuid?: string }),
  })
  acceleratorRequestEvicted(
    @Root() payload: EvictedEventPayload,
    @Arg("instanceUuid", () => ID, { nullable: true }) _instanceUuid?: string,
    @Arg("arqUuid", () => ID, { nullable: true }) _arqUuid?: string,
  ): EvictedEventPayload {
    return payload;
  }
}

function visible(ctx: ApiContext, arq: ArqView | null) {
  return arq && canSeeArq(ctx.principal!, arq.projectId) ? arq : null;
}

/** The context of a creation: for the project named (admin and service only), or the token's. */
function creationContext(ctx: ApiContext, projectId: string | undefined) {
  const cmd = commandContext(ctx);
  if (projectId) {
    if (!seesAllProjects(ctx.principal!)) throw forbidden("setting projectId (admin or service only)");
    cmd.projectId = projectId;
  }
  return cmd;
}

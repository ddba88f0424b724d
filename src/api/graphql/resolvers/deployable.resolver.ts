import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from "type-graphql";
import type { ApiContext } from "../context.js";
import { DeployableFilter } from "../inputs/filters.input.js";
import { listDeployables } from "../../../../projections/deployables/queries.js";
import { RegionProgramming, RegionProgrammingOutcome } from "../types/bitstream.type.js";
import type { DeployableView } from "../../../../projections/device-tree/queries.js";
import { toConnection } from "../types/connection.js";
import { AttachHandle, Deployable, DeployableConnection } from "../types/deployable.type.js";
import { Device } from "../types/device.type.js";
import * as past from "../../../audit/past-views.js";
import { afterCursor, pageSize } from "./paging.js";

@Resolver(() => Deployable)
export class DeployableResolver {
  @Authorized("hardware:read")
  @Query(() => DeployableConnection)
  async deployables(
    @Ctx() ctx: ApiContext,
    @Arg("filter", () => DeployableFilter, { nullable: true }) filter?: DeployableFilter,
    @Arg("first", () => Int, { nullable: true }) first?: number,
    @Arg("after", () => String, { nullable: true }) after?: string,
  ) {
    return toConnection(await listDeployables(ctx.services.readStore, { ...filter }, pageSize(first), afterCursor(after)));
  }

  @Authorized("hardware:read")
  @Query(() => Deployable, { nullable: true })
  deployable(@Ctx() ctx: ApiContext, @Arg("uuid", () => ID) uuid: string) {
    return ctx.loaders.deployable.load(uuid);
  }

  @FieldResolver(() => Deployable, { nullable: true })
  parent(@Root() d: DeployableView, @Ctx() ctx: ApiContext) {
    if (past.isPast(d)) return past.deployable(d.past, d.parentUuid);
    return d.parentUuid ? ctx.loaders.deployable.load(d.parentUuid) : null;
  }

  @FieldResolver(() => Deployable, { nullable: true })
  root(@Root() d: DeployableView, @Ctx() ctx: ApiContext) {
    if (past.isPast(d)) return past.deployable(d.past, d.rootUuid);
    return d.rootUuid ? ctx.loaders.deployable.load(d.rootUuid) : null;
  }

  @FieldResolver(() => [Deployable])
  children(@Root() d: DeployableView, @Ctx() ctx: ApiContext) {
    if (past.isPast(d)) return past.childrenOf(d);
    return ctx.loaders.childrenOfDeployable.load(d.uuid);
  }

  @FieldResolver(() => Device)
  device(@Root() d: DeployableView, @Ctx() ctx: ApiContext) {
    if (past.isPast(d)) return past.deviceOf(d);
    return ctx.loaders.device.load(d.deviceUuid);
  }

  @FieldResolver(() => RegionProgramming, { nullable: true, description: "The programming request in flight on this region" })
  programming(@Root() d: DeployableView, @Ctx() ctx: ApiContext) {
    if (past.isPast(d)) return past.programmingOf(d);
    return ctx.loaders.programming.load(d.uuid);
  }

  @FieldResolver(() => RegionProgrammingOutcome, { nullable: true, description: "How the region's last programming request ended" })
  lastProgramming(@Root() d: DeployableView, @Ctx() ctx: ApiContext) {
    if (past.isPast(d)) return past.lastProgrammingOf(d);
    return ctx.loaders.lastProgramming.load(d.uuid);
  }

  @FieldResolver(() => [AttachHandle])
  attachHandles(@Root() d: DeployableView, @Ctx() ctx: ApiContext) {
    if (past.isPast(d)) return past.handlesOf(d);
    return ctx.loaders.handlesOfDeployable.load(d.uuid);
  }
}

import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { commandContext, type ApiContext } from "../context.js";
import { apiError } from "../errors.js";
import { DeviceFilter } from "../inputs/filters.input.js";
import { toConnection } from "../types/connection.js";
import { Deployable } from "../types/deployable.type.js";
import { ControlPathId, Device, DeviceConnection } from "../types/device.type.js";
import { DeviceHealth } from "../types/health.type.js";
import { HEALTHY } from "../../../domain/inventory/health.js";
import { DeviceStatus } from "../types/scalars.js";
import { listDevices, type DeviceView } from "../../../../projections/device-tree/queries.js";
import { deployablesOf, isPast } from "../../../audit/past-views.js";
import { readAfterWrite } from "../../read-your-writes.js";
import { afterCursor, pageSize } from "./paging.js";
import { AS_OF, pastOf } from "./past.js";

@Resolver(() => Device)
export class DeviceResolver {
  @Authorized("hardware:read")
  @Query(() => DeviceConnection)
  async devices(
    @Ctx() ctx: ApiContext,
    @Arg("filter", () => DeviceFilter, { nullable: true }) filter?: DeviceFilter,
    @Arg("first", () => Int, { nullable: true }) first?: number,
    @Arg("after", () => String, { nullable: true }) after?: string,
    @Arg("asOf", () => String, { ...AS_OF, description: `${AS_OF.description} (with filter.hostname)` }) asOf?: string,
  ) {
    const past = pastOf(ctx, asOf);
    if (past) return toConnection(await past.devices({ ...filter }, pageSize(first), afterCursor(after), asOf!));
    return toConnection(await listDevices(ctx.services.readStore, { ...filter }, pageSize(first), afterCursor(after)));
  }

  @Authorized("hardware:read")
  @Query(() => Device, { nullable: true })
  device(@Ctx() ctx: ApiContext, @Arg("uuid", () => ID) uuid: string, @Arg("asOf", () => String, AS_OF) asOf?: string) {
    const past = pastOf(ctx, asOf);
    return past ? past.device(uuid, asOf!) : ctx.loaders.device.load(uuid);
  }

  @Authorized("device:status")
  @Mutation(() => Device, { description: "MAINTAINING reserves the device's capacity; ENABLED frees it" })
  async setDeviceStatus(
    @Ctx() ctx: ApiContext,
    @Arg("uuid", () => ID) uuid: string,
    @Arg("status", () => DeviceStatus) status: "ENABLED" | "MAINTAINING",
  ) {
    const device = await ctx.loaders.device.load(uuid);
    if (!device) throw apiError("NOT_FOUND", `no device with uuid ${uuid}`);
    await ctx.services.app.setDeviceStatus(commandContext(ctx), device.hostname, uuid, status);
    return readAfterWrite(() => {
      ctx.loaders.device.clear(uuid);
      return ctx.loaders.device.load(uuid);
    });
  }

  @FieldResolver(() => [ControlPathId], { description: "Every control path of the device (the database-model spec: a device may have several), controlPath first" })
  controlPaths(@Root() device: DeviceView): ControlPathId[] {
    return [device.controlPath, ...(device.additionalControlPaths ?? [])];
  }

  @FieldResolver(() => DeviceHealth)
  health(@Root() device: DeviceView): DeviceHealth {
    return device.health ?? HEALTHY;
  }

  @FieldResolver(() => [Deployable])
  deployables(@Root() device: DeviceView, @Ctx() ctx: ApiContext) {
    if (isPast(device)) return deployablesOf(device);
    return ctx.loaders.deployablesOfDevice.load(device.uuid);
  }
}

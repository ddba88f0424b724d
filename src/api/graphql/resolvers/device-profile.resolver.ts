import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { getProfileByName, getProfileByUuid, listProfiles } from "../../../../projections/device-profiles/queries.js";
import { commandContext, type ApiContext } from "../context.js";
import { badInput } from "../errors.js";
import { DeviceProfileInput } from "../inputs/arq.input.js";
import { DeviceProfile } from "../types/device-profile.type.js";
import { AS_OF, pastOf } from "./past.js";

@Resolver(() => DeviceProfile)
export class DeviceProfileResolver {
  @Authorized("device_profile:read")
  @Query(() => [DeviceProfile], { description: "In creation order" })
  deviceProfiles(@Ctx() ctx: ApiContext, @Arg("names", () => [String], { nullable: true }) names?: string[]) {
    return listProfiles(ctx.services.readStore, names ?? undefined);
  }

  @Authorized("device_profile:read")
  @Query(() => DeviceProfile, { nullable: true, description: "By uuid or by name (exactly one)" })
  deviceProfile(
    @Ctx() ctx: ApiContext,
    @Arg("uuid", () => ID, { nullable: true }) uuid?: string,
    @Arg("name", () => String, { nullable: true }) name?: string,
    @Arg("asOf", () => String, AS_OF) asOf?: string,
  ) {
    if (Boolean(uuid) === Boolean(name)) throw badInput("uuid", "give exactly one of uuid and name");
    const past = pastOf(ctx, asOf);
    if (past) return past.deviceProfile({ uuid, name }, asOf!);
    return uuid ? getProfileByUuid(ctx.services.readStore, uuid) : getProfileByName(ctx.services.readStore, name!);
  }

  @Authorized("device_profile:write")
  @Mutation(() => DeviceProfile)
  async createDeviceProfile(@Ctx() ctx: ApiContext, @Arg("input", () => DeviceProfileInput) input: DeviceProfileInput) {
    return ctx.services.app.createDeviceProfile(commandContext(ctx), structuredClone({ ...input }));
  }

  @Authorized("device_profile:write")
  @Mutation(() => [ID], { description: "The uuids deleted; nothing is deleted when any is missing or in use" })
  async deleteDeviceProfiles(
    @Ctx() ctx: ApiContext,
    @Arg("names", () => [String], { nullable: true }) names?: string[],
    @Arg("uuids", () => [ID], { nullable: true }) uuids?: string[],
  ) {
    if (!names?.length && !uuids?.length) throw badInput("names", "give the names or the uuids of the profiles to delete");
    const deleted = await ctx.services.app.deleteDeviceProfiles(commandContext(ctx), {
      names: names ?? undefined,
      uuids: uuids ?? undefined,
    });
    return deleted;
  }
}

import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { getProfileByName, getProfileByUuid, getProfileVersion, getProfileVersions, listProfiles } from "../../../../projections/device-profiles/queries.js";
import type { DeviceProfileView } from "../../../domain/device-profiles/view.js";
import { commandContext, type ApiContext } from "../context.js";
import { badInput } from "../errors.js";
import { warnAboutGroups } from "../warnings.js";
import { DeviceProfileInput, DeviceProfileUpdateInput } from "../inputs/arq.input.js";
import { DeviceProfile, DeviceProfileMigration, DeviceProfileVersion } from "../types/device-profile.type.js";
import { JSONScalar } from "../types/scalars.js";
import { AS_OF, pastOf } from "./past.js";

/** A profile as answered for one of its versions: `version` is that one, `currentVersion` the latest. */
type ProfileAnswer = DeviceProfileView & { currentVersion?: number };

@Resolver(() => DeviceProfile)
export class DeviceProfileResolver {
  @Authorized("device_profile:read")
  @Query(() => [DeviceProfile], { description: "In creation order; inline profiles (os-acc's) are never listed" })
  deviceProfiles(@Ctx() ctx: ApiContext, @Arg("names", () => [String], { nullable: true }) names?: string[]) {
    return listProfiles(ctx.services.readStore, names ?? undefined);
  }

  @Authorized("device_profile:read")
  @Query(() => DeviceProfile, { nullable: true, description: "By uuid or by name (exactly one); with version, as that version was" })
  async deviceProfile(
    @Ctx() ctx: ApiContext,
    @Arg("uuid", () => ID, { nullable: true }) uuid?: string,
    @Arg("name", () => String, { nullable: true }) name?: string,
    @Arg("asOf", () => String, AS_OF) asOf?: string,
    @Arg("version", () => Int, { nullable: true, description: "A version from 1 to the profile's current one" }) version?: number,
  ): Promise<ProfileAnswer | null> {
    if (Boolean(uuid) === Boolean(name)) throw badInput("uuid", "give exactly one of uuid and name");
    if (version !== undefined && version !== null && version < 1) throw badInput("version", "versions start at 1");
    const past = pastOf(ctx, asOf);
    if (past && version != null) throw badInput("version", "give version or asOf, not both");
    if (past) return past.deviceProfile({ uuid, name }, asOf!);
    const profile = uuid ? await getProfileByUuid(ctx.services.readStore, uuid) : await getProfileByName(ctx.services.readStore, name!);
    if (!profile || version == null || version === profile.version) return profile;
    if (version > profile.version) return null;
    const old = await getProfileVersion(ctx.services.readStore, profile.uuid, version);
    return old && { ...profile, version, description: old.description, groups: old.groups, currentVersion: profile.version };
  }

  @FieldResolver(() => [DeviceProfileVersion], { description: "Every version up to the current one, oldest first" })
  versions(@Ctx() ctx: ApiContext, @Root() profile: ProfileAnswer) {
    return getProfileVersions(ctx.services.readStore, profile.uuid, profile.currentVersion ?? profile.version);
  }

  @Authorized("device_profile:write")
  @Mutation(() => DeviceProfile)
  async createDeviceProfile(@Ctx() ctx: ApiContext, @Arg("input", () => DeviceProfileInput) input: DeviceProfileInput) {
    const profile = await ctx.services.app.createDeviceProfile(commandContext(ctx), structuredClone({ ...input }));
    await warnAboutGroups(ctx, input.groups, profile.groups);
    return profile;
  }

  @Authorized("device_profile:write")
  @Mutation(() => DeviceProfile, { description: "A new version (description, groups); the same content again makes none. ARQs keep the version they were made from" })
  async updateDeviceProfile(@Ctx() ctx: ApiContext, @Arg("input", () => DeviceProfileUpdateInput) input: DeviceProfileUpdateInput) {
    const { name, description, groups, expectedVersion } = structuredClone({ ...input });
    if (groups === null) throw badInput("groups", "groups cannot be null: leave them out to keep them");
    const profile = await ctx.services.app.updateDeviceProfile(commandContext(ctx), { name, description, groups, expectedVersion });
    if (groups !== undefined) await warnAboutGroups(ctx, groups, profile.groups);
    return profile;
  }

  @Authorized("device_profile:write")
  @Mutation(() => DeviceProfile, { description: "A disabled profile refuses new ARQs (PROFILE_DISABLED); the ARQs made from it are untouched" })
  async setDeviceProfileEnabled(@Ctx() ctx: ApiContext, @Arg("name", () => String) name: string, @Arg("enabled", () => Boolean) enabled: boolean) {
    return ctx.services.app.setDeviceProfileEnabled(commandContext(ctx), name, enabled);
  }

  @Authorized("device_profile:write")
  @Mutation(() => DeviceProfile, { description: "Same uuid, versions, state and ARQs under the new name; the old name is free again" })
  async renameDeviceProfile(@Ctx() ctx: ApiContext, @Arg("name", () => String) name: string, @Arg("newName", () => String) newName: string) {
    return ctx.services.app.renameDeviceProfile(commandContext(ctx), name, newName);
  }

  @Authorized("device_profile:write")
  @Mutation(() => [DeviceProfileMigration], {
    description:
      "Renames traits and resource classes in every listed profile ({traits: {OLD: NEW}, resourceClasses: {OLD: NEW}}), a new version each; all or nothing. dryRun: what would change, nothing written",
  })
  async migrateDeviceProfiles(
    @Ctx() ctx: ApiContext,
    @Arg("mapping", () => JSONScalar) mapping: unknown,
    @Arg("dryRun", () => Boolean, { defaultValue: false }) dryRun: boolean,
  ) {
    const names = (await listProfiles(ctx.services.readStore)).map((p) => p.name);
    return ctx.services.app.migrateDeviceProfiles(commandContext(ctx), names, structuredClone(mapping), dryRun);
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

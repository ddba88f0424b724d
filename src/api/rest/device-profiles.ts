/** /v2/device_profiles: list (?name=a,b), show by uuid or name (>= 2.2), create one, delete by uuid or names. */
import { isJsonObject, isUuid } from "../../domain/shared/json.js";
import { authorize } from "./auth.js";
import { empty, ok, type RestContext, type RestResult } from "./context.js";
import { badRequest, notFound, RestError } from "./errors.js";
import { deviceProfileOneShape, deviceProfileShape } from "./shapes.js";

export async function listDeviceProfiles(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "device_profile:read");
  const name = ctx.query.only("name").get("name");
  const profiles = await ctx.reads.profiles(name === undefined ? undefined : name.split(","));
  return ok({ device_profiles: profiles.map((p) => deviceProfileShape(p, ctx.publicUrl)) });
}

export async function showDeviceProfile(ctx: RestContext, id: string): Promise<RestResult> {
  authorize(ctx.caller, "device_profile:read");
  ctx.query.only();
  const byUuid = isUuid(id);
  if (!byUuid && ctx.version < 2) {
    throw new RestError("NOT_ACCEPTABLE", `${JSON.stringify(id)} is not a uuid: getting a device profile by name needs microversion 2.2 (OpenStack-API-Version: accelerator 2.2).`);
  }
  const profile = byUuid ? await ctx.reads.profileByUuid(id.toLowerCase()) : await ctx.reads.profileByName(id);
  if (!profile) throw notFound(`Device profile ${byUuid ? "with uuid" : "named"} ${id} could not be found.`);
  return ok({ device_profile: deviceProfileOneShape(profile, ctx.publicUrl) });
}

/** The body is a list holding exactly one profile; the answer is the profile itself (201). */
export async function createDeviceProfile(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "device_profile:write");
  ctx.query.only();
  const body = await ctx.body();
  if (!Array.isArray(body) || body.length !== 1) {
    throw badRequest("Only one device profile allowed per POST request for now: send a JSON list holding one profile.");
  }
  const p: unknown = body[0];
  if (!isJsonObject(p)) throw badRequest("The device profile must be an object {name, groups, description?, uuid?}.");
  const profile = await ctx.services.app.createDeviceProfile(ctx.command(), { name: p.name, groups: p.groups, description: p.description, uuid: p.uuid });
  return ok(deviceProfileShape(profile, ctx.publicUrl), 201);
}

/** DELETE /device_profiles/{uuid | name[,name...]} or ?value=...: all or nothing. */
export async function deleteDeviceProfiles(ctx: RestContext, value?: string): Promise<RestResult> {
  authorize(ctx.caller, "device_profile:write");
  const v: string | undefined = value ?? ctx.query.only("value").get("value");
  if (value !== undefined) ctx.query.only();
  if (!v) throw badRequest("Give the uuid or the names of the device profiles to delete: /device_profiles/{uuid | name[,name...]}.", "value");
  const names = v.split(",");
  const sel = isUuid(v) ? { uuids: [v] } : { names };
  await ctx.services.app.deleteDeviceProfiles(ctx.command(), sel);
  return empty(204);
}

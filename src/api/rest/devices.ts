/** /v2/devices: list (type, vendor, hostname, filters), show, enable, disable. */
import { authorize } from "./auth.js";
import { empty, ok, type RestContext, type RestResult } from "./context.js";
import { notFound } from "./errors.js";
import { parseFilters } from "./filters.js";
import { deviceShape } from "./shapes.js";

export async function listDevices(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "hardware:read");
  const q = ctx.query.only("type", "vendor", "hostname", "filters.field", "filters.value");
  const { limit } = parseFilters(q);
  const devices = await ctx.reads.devices({ type: q.get("type"), vendor: q.get("vendor"), hostname: q.get("hostname") }, limit);
  return ok({ devices: devices.map((d) => deviceShape(d, ctx.publicUrl, ctx.version)) });
}

export async function showDevice(ctx: RestContext, uuid: string): Promise<RestResult> {
  authorize(ctx.caller, "hardware:read");
  ctx.query.only();
  const device = await ctx.reads.device(uuid);
  if (!device) throw notFound(`Device ${uuid} could not be found.`);
  return ok(deviceShape(device, ctx.publicUrl, ctx.version));
}

/**
 * disable: the maintenance taint, by "cyborg-rest" (the device is MAINTAINING and Placement
 * reserves it); enable: the maintenance taint removed (ENABLED; 409 while other taints keep it
 * MAINTAINING, naming them). 200, no body.
 */
export function setDeviceStatus(status: "ENABLED" | "MAINTAINING") {
  return async (ctx: RestContext, uuid: string): Promise<RestResult> => {
    authorize(ctx.caller, "device:status");
    ctx.query.only();
    const device = await ctx.reads.device(uuid);
    if (!device) throw notFound(`Device ${uuid} could not be found.`);
    const reason = status === "MAINTAINING" ? "disabled through Cyborg's API (POST /v2/devices/{uuid}/disable)" : "enabled through Cyborg's API (POST /v2/devices/{uuid}/enable)";
    await ctx.services.app.setDeviceStatus(ctx.command(), device.hostname, uuid, status, { by: "cyborg-rest", reason });
    return empty(200);
  };
}

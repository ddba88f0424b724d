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

/** disable: MAINTAINING (its capacity reserved in the resource providers); enable: ENABLED. 200, no body. */
export function setDeviceStatus(status: "ENABLED" | "MAINTAINING") {
  return async (ctx: RestContext, uuid: string): Promise<RestResult> => {
    authorize(ctx.caller, "device:status");
    ctx.query.only();
    const device = await ctx.reads.device(uuid);
    if (!device) throw notFound(`Device ${uuid} could not be found.`);
    await ctx.services.app.setDeviceStatus(ctx.command(), device.hostname, uuid, status);
    return empty(200);
  };
}

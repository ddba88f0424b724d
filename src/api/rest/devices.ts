/**
 * /v2/devices: list (type, vendor, hostname, filters), show, enable, disable. A device shows, beside
 * Cyborg's fields, its health, its place in the health loop, its taints and its holders.
 */
import { authorize } from "./auth.js";
import { empty, ok, type RestContext, type RestResult } from "./context.js";
import { notFound } from "./errors.js";
import { parseFilters } from "./filters.js";
import { deviceHolders, deviceLifecycleState, type DeviceLoopReads } from "../device-loop.js";
import type { DeviceView } from "./reads.js";
import { deviceShape, type DeviceLoopFields } from "./shapes.js";

export async function listDevices(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "hardware:read");
  const q = ctx.query.only("type", "vendor", "hostname", "filters.field", "filters.value");
  const { limit } = parseFilters(q);
  const devices = await ctx.reads.devices({ type: q.get("type"), vendor: q.get("vendor"), hostname: q.get("hostname") }, limit);
  const loop = ctx.reads.deviceLoop();
  const shown = await Promise.all(devices.map(async (d) => deviceShape(d, await loopFields(d, loop), ctx.publicUrl, ctx.version)));
  return ok({ devices: shown });
}

export async function showDevice(ctx: RestContext, uuid: string): Promise<RestResult> {
  authorize(ctx.caller, "hardware:read");
  ctx.query.only();
  const device = await ctx.reads.device(uuid);
  if (!device) throw notFound(`Device ${uuid} could not be found.`);
  return ok(deviceShape(device, await loopFields(device, ctx.reads.deviceLoop()), ctx.publicUrl, ctx.version));
}

async function loopFields(device: DeviceView, reads: DeviceLoopReads): Promise<DeviceLoopFields> {
  const [state, holders] = await Promise.all([deviceLifecycleState(device, reads), deviceHolders(device, reads)]);
  return { state, holders };
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

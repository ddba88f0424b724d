/** /v2/deployables: list (filters), show, and PATCH program. */
import { programDeployable as requestProgramming } from "../program-deployable.js";
import { authorize } from "./auth.js";
import { ok, type RestContext, type RestResult } from "./context.js";
import { badRequest, notFound, RestError } from "./errors.js";
import { parseFilters } from "./filters.js";
import { deployableShape } from "./shapes.js";

export async function listDeployables(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "hardware:read");
  const { limit, name } = parseFilters(ctx.query.only("filters.field", "filters.value"));
  const deployables = await ctx.reads.deployables({ name }, limit);
  return ok({ deployables: deployables.map((d) => deployableShape(d, ctx.publicUrl)) });
}

export async function showDeployable(ctx: RestContext, uuid: string): Promise<RestResult> {
  authorize(ctx.caller, "hardware:read");
  ctx.query.only();
  const deployable = await ctx.reads.deployable(uuid);
  if (!deployable) throw notFound(`Deployable ${uuid} could not be found.`);
  return ok(deployableShape(deployable, ctx.publicUrl));
}

/** How long PATCH .../program waits for the region's programming (Cyborg's is a synchronous RPC). */
const PROGRAM_WAIT_MS = 60_000;

/**
 * PATCH /v2/deployables/{uuid}/program with `[{"op": "replace", "path": "/program", "value":
 * [{"image_uuid": "<bitstream id>"}]}]`: asks the region's agent to program it and waits for the
 * outcome, as Cyborg's synchronous call does: 200 with the deployable once programmed (at once when
 * it already runs the bitstream), 502 PROGRAMMING_FAILED with the driver's reason, or 202 with the
 * deployable when it has not finished within a minute (it goes on; the deployable shows it).
 */
export async function programDeployable(ctx: RestContext, uuid: string): Promise<RestResult> {
  authorize(ctx.caller, "deployable:program");
  ctx.query.only();
  const bitstreamId = imageOf(await ctx.body());
  if (!(await ctx.reads.deployable(uuid))) throw notFound(`Deployable ${uuid} could not be found.`);
  const request = await requestProgramming(ctx.services, ctx.command(), uuid, bitstreamId);
  const deadline = Date.now() + PROGRAM_WAIT_MS;
  while (request) {
    const last = await ctx.reads.lastProgramming(uuid);
    if (last?.requestId === request.requestId) {
      if (last.outcome !== "PROGRAMMED") throw new RestError("PROGRAMMING_FAILED", `Programming deployable ${uuid} with ${bitstreamId} ${last.outcome.toLowerCase()}: ${last.reason ?? "no reason given"}`);
      break;
    }
    if (Date.now() > deadline) return ok(deployableShape((await ctx.reads.deployable(uuid))!, ctx.publicUrl), 202);
    await new Promise((r) => setTimeout(r, 50));
  }
  const deployable = await ctx.reads.deployable(uuid);
  if (!deployable) throw notFound(`Deployable ${uuid} could not be found.`);
  return ok(deployableShape(deployable, ctx.publicUrl));
}

/** The bitstream of Cyborg's program patch. */
function imageOf(body: unknown): string {
  const op = Array.isArray(body) && body.length === 1 ? (body[0] as Record<string, unknown>) : undefined;
  const value = op?.op === "replace" && op.path === "/program" && Array.isArray(op.value) && op.value.length === 1 ? (op.value[0] as Record<string, unknown>) : undefined;
  const image = value?.image_uuid;
  if (typeof image !== "string" || image.length === 0 || image.length > 255) {
    throw badRequest('The body must be [{"op": "replace", "path": "/program", "value": [{"image_uuid": "<bitstream id>"}]}].', "image_uuid");
  }
  return image;
}

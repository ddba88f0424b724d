/** /v2/deployables: list (filters), show, and PATCH program (not available yet). */
import { authorize } from "./auth.js";
import { ok, type RestContext, type RestResult } from "./context.js";
import { notFound, RestError } from "./errors.js";
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

/** FPGA programming has no command yet: a clear 501 that changes nothing. */
export async function programDeployable(ctx: RestContext, uuid: string): Promise<RestResult> {
  authorize(ctx.caller, "deployable:program");
  ctx.query.only();
  if (!(await ctx.reads.deployable(uuid))) throw notFound(`Deployable ${uuid} could not be found.`);
  throw new RestError(
    "NOT_IMPLEMENTED",
    `Programming FPGAs is not available in cyborg-es yet: deployable ${uuid} was not changed. Program it on its host with the vendor's tool; the agent reports the new bitstream.`,
  );
}

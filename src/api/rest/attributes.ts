/**
 * /v2/attributes: list (deployable_id, key) and show. Attributes are what the host agent reports
 * for a deployable (rc, traitN): the agent's next report decides them, so they are not written
 * here (405, docs/api.md, "Where we differ from Cyborg on purpose"). Attributes live inside their
 * deployable in the read models: a list or a show reads the deployables.
 */
import { authorize } from "./auth.js";
import { ok, type RestContext, type RestResult } from "./context.js";
import { notFound, RestError } from "./errors.js";
import type { DeployableView } from "./reads.js";
import { attributeShape } from "./shapes.js";

export async function listAttributes(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "hardware:read");
  const q = ctx.query.only("deployable_id", "key");
  const deployableId = q.get("deployable_id");
  const key = q.get("key");
  const deployables = deployableId === undefined ? await ctx.reads.deployables({}) : [await ctx.reads.deployable(deployableId)];
  const attributes = deployables
    .filter((d): d is DeployableView => d !== null)
    .flatMap((d) => d.attributes.filter((a) => key === undefined || a.key === key).map((a) => attributeShape(a, d, ctx.publicUrl)));
  return ok({ attributes });
}

export async function showAttribute(ctx: RestContext, uuid: string): Promise<RestResult> {
  authorize(ctx.caller, "hardware:read");
  ctx.query.only();
  for (const d of await ctx.reads.deployables({})) {
    const a = d.attributes.find((x) => x.uuid === uuid);
    if (a) return ok(attributeShape(a, d, ctx.publicUrl));
  }
  throw notFound(`Attribute ${uuid} could not be found.`);
}

export async function writeAttribute(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "attribute:write");
  throw new RestError(
    "METHOD_NOT_ALLOWED",
    "Attributes are what the host agent reports for a deployable (rc, traitN): change the host's driver configuration, and the agent's next report updates them. They are not written through the API.",
    undefined,
    { Allow: "GET" },
  );
}

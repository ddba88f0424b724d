/**
 * /v2/accelerator_requests: list (?instance=, ?bind_state=resolved), show, create for a profile,
 * PATCH bind/unbind, delete by ?arqs= or ?instance= (and /{uuid}, as openstacksdk sends it).
 */
import { arqProjectScope, canSeeArq } from "../auth/policy.js";
import { isJsonObject } from "../../domain/shared/json.js";
import { parseArqPatch, patchFieldOf } from "./arq-patch.js";
import { authorize, requireServiceToken } from "./auth.js";
import { empty, ok, type RestContext, type RestResult } from "./context.js";
import { badRequest, forbidden, inRestTerms, notFound, RestError } from "./errors.js";
import { arqShape } from "./shapes.js";
import { checkBindingCount, MAX_ARQ_LIST } from "../../app/request-limits.js";
import { explainingRefusal } from "../arq-explanation.js";

/**
 * `instance` and `bind_state=resolved` (cyborg-reference 2.4): with both, 423 while any of the
 * instance's ARQs is unresolved; "resolved" is the read model's (the resolved index).
 */
export async function listArqs(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "arq:read");
  ctx.query.only("instance", "bind_state");
  const instanceUuid = ctx.query.get("instance");
  const bindState = ctx.query.get("bind_state");
  if (bindState !== undefined && bindState !== "resolved") {
    throw badRequest(`Bad state: ${bindState}. Expected state(s): ['resolved'] (bind_state=resolved is the only filter on bind states).`, "bind_state");
  }
  const scope = { projectId: arqProjectScope(ctx.caller.principal) };
  const resolvedOnly = bindState === "resolved";
  let arqs;
  if (instanceUuid !== undefined && resolvedOnly) {
    const resolved = new Set((await ctx.reads.arqs({ ...scope, instanceUuid, resolvedOnly: true })).map((a) => a.uuid));
    arqs = await ctx.reads.arqs({ ...scope, instanceUuid });
    const pending = arqs.filter((a) => !resolved.has(a.uuid));
    if (pending.length > 0) {
      throw new RestError("LOCKED", `The binding of ${pending.length} of the ${arqs.length} ARQs of instance ${instanceUuid} is not resolved yet (${pending.map((a) => a.uuid).join(", ")}); ask again.`);
    }
  } else {
    arqs = await ctx.reads.arqs({ ...scope, instanceUuid, resolvedOnly: resolvedOnly || undefined });
  }
  return ok({ arqs: arqs.map((a) => arqShape(a, ctx.publicUrl)) });
}

export async function showArq(ctx: RestContext, uuid: string): Promise<RestResult> {
  authorize(ctx.caller, "arq:read");
  ctx.query.only();
  const arq = await ctx.reads.arq(uuid);
  if (!arq || !canSeeArq(ctx.caller.principal, arq.projectId)) throw notFound(`Accelerator request ${uuid} not found.`);
  return ok(arqShape(arq, ctx.publicUrl));
}

const CREATION_FIELDS: Record<string, string | undefined> = { deviceProfileName: "device_profile_name", groupIndex: "device_profile_group_id" };

/** `{"device_profile_name": ...}`, and the client's optional `device_profile_group_id`: 201 `{"arqs": [...]}`. */
export async function createArqs(ctx: RestContext): Promise<RestResult> {
  authorize(ctx.caller, "arq:create");
  ctx.query.only();
  const body = await ctx.body();
  if (!isJsonObject(body)) throw badRequest('The body must be an object: {"device_profile_name": "<name>"}.');
  const name = body.device_profile_name;
  if (name === undefined || name === null) throw badRequest('device_profile_name is required: {"device_profile_name": "<name>"}.', "device_profile_name");
  if (typeof name !== "string") throw badRequest("device_profile_name must be a string.", "device_profile_name");
  const creation = { deviceProfileName: name, groupIndex: groupIndex(body.device_profile_group_id) };
  const arqs = await inRestTerms(() => ctx.services.app.createArqs(ctx.command(), creation), (f) => CREATION_FIELDS[f]);
  return ok({ arqs: arqs.map((a) => arqShape(a, ctx.publicUrl)) }, 201);
}

/**
 * Bind (all ops `add`) or unbind (all `remove`): the compute service's token only; 202, no body.
 * openstacksdk sends it to /accelerator_requests/{uuid}, with the same body.
 */
export async function patchArqs(ctx: RestContext, uuid?: string): Promise<RestResult> {
  ctx.query.only();
  const body = await ctx.body();
  if (uuid !== undefined && !(isJsonObject(body) && Object.hasOwn(body, uuid))) {
    throw badRequest(`The body of PATCH /accelerator_requests/${uuid} must hold the patch of ARQ ${uuid}: {"${uuid}": [...]}.`, uuid);
  }
  const patch = parseArqPatch(body, ctx.version);
  requireServiceToken(ctx.caller, patch.kind === "bind" ? "binding ARQs" : "unbinding ARQs");
  const cmd = ctx.command();
  if (patch.kind === "bind") {
    if (patch.projectId !== undefined) {
      authorize(ctx.caller, "arq:bind_project");
      cmd.projectId = patch.projectId;
    }
    const uuids = patch.bindings.map((b) => b.arqUuid);
    const bind = () => ctx.services.app.startBinds(cmd, patch.bindings, { allocate: ctx.services.bindInline });
    await inRestTerms(() => explainingRefusal(ctx.services.app, ctx.services.readStore, patch.bindings, bind), (f) => patchFieldOf(f, uuids));
  } else {
    checkBindingCount("arqs", patch.arqUuids.length, ctx.services.limits.maxBindings);
    const uuids = patch.arqUuids;
    await inRestTerms(() => ctx.services.app.unbindArqs(cmd, uuids), (f) => patchFieldOf(f, uuids));
  }
  return empty(202);
}

/**
 * `?arqs=u1,u2` (all or nothing) or `?instance=<uuid>` (idempotent, service token only); an ARQ
 * bound to an instance is deleted only with a service token.
 */
export async function deleteArqs(ctx: RestContext, uuid?: string): Promise<RestResult> {
  authorize(ctx.caller, "arq:delete");
  let arqs = uuid;
  let instanceUuid: string | undefined;
  if (uuid === undefined) {
    ctx.query.only("arqs", "instance");
    arqs = ctx.query.get("arqs");
    instanceUuid = ctx.query.get("instance");
  } else ctx.query.only();
  if ((arqs === undefined) === (instanceUuid === undefined)) throw badRequest("Give exactly one of ?arqs=<uuid>[,<uuid>...] and ?instance=<uuid>.", "arqs");
  if (instanceUuid !== undefined) {
    requireServiceToken(ctx.caller, "deleting the ARQs of an instance");
    await ctx.services.app.deleteArqs(ctx.command(), { instanceUuid });
  } else {
    const arqUuids = arqs!.split(",").map((s) => s.trim());
    if (arqUuids.length > MAX_ARQ_LIST) throw badRequest(`At most ${MAX_ARQ_LIST} ARQs per request.`, "arqs");
    await ctx.services.app.deleteArqs(ctx.command(), { arqUuids, caller: { actsAsService: ctx.caller.actsAsService } });
  }
  return empty(204);
}

function groupIndex(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  const n = typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n)) throw badRequest(`device_profile_group_id must be a group index (an integer), got ${JSON.stringify(v)}.`, "device_profile_group_id");
  return n;
}

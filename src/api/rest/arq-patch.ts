/**
 * PATCH /v2/accelerator_requests: `{arq_uuid: [json-patch ops], ...}` (cyborg-reference 1.4) read
 * into one bind or one unbind. Only the wire format is checked here; the bind's own rules (all
 * three fields, states, an instance bound once) are the application's.
 */
import { isJsonObject } from "../../domain/shared/json.js";
import { badRequest, RestError } from "./errors.js";
import type { Microversion } from "./microversion.js";

export type ArqPatch =
  | {
      kind: "bind";
      /** Fields left out of the patch stay undefined: the bind command names what is missing. */
      bindings: Array<{ arqUuid: string; hostname: string; deviceRpUuid: string; instanceUuid: string }>;
      /** /project_id (>= 2.1), the same for every ARQ of the request. */
      projectId?: string;
    }
  | { kind: "unbind"; arqUuids: string[] };

const FIELDS: Readonly<Record<string, "hostname" | "deviceRpUuid" | "instanceUuid" | "projectId">> = {
  "/hostname": "hostname",
  "/device_rp_uuid": "deviceRpUuid",
  "/instance_uuid": "instanceUuid",
  "/project_id": "projectId",
};

export function parseArqPatch(body: unknown, version: Microversion): ArqPatch {
  if (!isJsonObject(body) || Object.keys(body).length === 0) {
    throw badRequest('The body must map each ARQ uuid to its JSON-patch operations: {"<arq uuid>": [{"op": "add", "path": "/hostname", "value": "..."}, ...]}.');
  }
  let kind: "add" | "remove" | undefined;
  const bindings: Extract<ArqPatch, { kind: "bind" }>["bindings"] = [];
  const projectIds = new Set<string>();
  for (const [arqUuid, ops] of Object.entries(body)) {
    if (!Array.isArray(ops) || ops.length === 0) throw badRequest(`The patch for ARQ ${arqUuid} must be a non-empty list of operations.`, arqUuid);
    const fields: Record<string, unknown> = {};
    let arqKind: "add" | "remove" | undefined;
    ops.forEach((op: unknown, i) => {
      const where = `${arqUuid}[${i}]`;
      if (!isJsonObject(op) || typeof op.op !== "string" || typeof op.path !== "string") {
        throw badRequest(`Each patch operation needs "op" and "path" (ARQ ${arqUuid}, operation ${i}).`, where);
      }
      if (op.op !== "add" && op.op !== "remove") throw badRequest(`Every op must be add or remove (got ${JSON.stringify(op.op)} for ARQ ${arqUuid}).`, where);
      if (arqKind && op.op !== arqKind) throw badRequest(`Every op must be add or remove: ARQ ${arqUuid} mixes them.`, where);
      arqKind = op.op;
      const field = FIELDS[op.path];
      if (!field || !Object.hasOwn(FIELDS, op.path)) {
        throw badRequest(`Unsupported path ${JSON.stringify(op.path)}: give /hostname, /device_rp_uuid, /instance_uuid or (from 2.1) /project_id.`, where);
      }
      if (field === "projectId" && version < 1) {
        throw new RestError("NOT_ACCEPTABLE", "/project_id in a bind needs microversion 2.1 (OpenStack-API-Version: accelerator 2.1).", where);
      }
      if (Object.hasOwn(fields, field)) throw badRequest(`Path ${op.path} appears twice in the patch of ARQ ${arqUuid}.`, where);
      fields[field] = op.value;
    });
    if (kind && arqKind !== kind) throw badRequest("One request binds or unbinds ARQs, not both: send the adds and the removes apart.", arqUuid);
    kind = arqKind;
    if (kind === "add") {
      if (fields.projectId !== undefined) {
        if (typeof fields.projectId !== "string" || fields.projectId.length === 0) throw badRequest(`/project_id must be a non-empty string (ARQ ${arqUuid}).`, arqUuid);
        projectIds.add(fields.projectId);
      }
      bindings.push({ arqUuid, hostname: fields.hostname, deviceRpUuid: fields.deviceRpUuid, instanceUuid: fields.instanceUuid } as never);
    }
  }
  if (kind === "remove") return { kind: "unbind", arqUuids: Object.keys(body) };
  if (projectIds.size > 1) throw badRequest("/project_id must be the same for every ARQ of one request.", "project_id");
  return { kind: "bind", bindings, projectId: [...projectIds][0] };
}

/** The JSON-patch path of each field of a binding, as Cyborg's PATCH body names it. */
const PATCH_PATHS: Record<string, string> = { hostname: "/hostname", deviceRpUuid: "/device_rp_uuid", instanceUuid: "/instance_uuid" };

/**
 * A bind's field as the PATCH body names it: `bindings[i].arqUuid` is the ARQ's key in the map,
 * `bindings[i].deviceRpUuid` its `/device_rp_uuid` path (`<uuid>/device_rp_uuid`); `arqUuids[i]`
 * (an unbind) the ARQ's key.
 */
export function patchFieldOf(field: string, arqUuids: readonly string[]): string | undefined {
  const m = /^(?:bindings|arqUuids)\[(\d+)\](?:\.(\w+))?$/.exec(field);
  if (!m) return field === "projectId" ? "project_id" : undefined;
  const uuid = arqUuids[Number(m[1])];
  if (uuid === undefined) return undefined;
  if (m[2] === undefined || m[2] === "arqUuid") return uuid;
  return PATCH_PATHS[m[2]] ? `${uuid}${PATCH_PATHS[m[2]]}` : undefined;
}

/**
 * os-acc's plug as one command: create the ARQs (a device profile by name, or inline groups), then
 * bind each to its group's provider. A bind that is refused (the instance already has its
 * accelerators, a provider unknown) deletes the ARQs this call created, so nothing is left behind,
 * and its error is marked so the front doors answer once the read models show the deletion.
 */
import { checkProvidersCover, plugBindings, validatePlugTarget } from "../../domain/arqs/bind.js";
import type { ArqView } from "../../domain/arqs/view.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { BitstreamCatalogue } from "../../infra/bitstreams/port.js";
import { checkBindingCount } from "../request-limits.js";
import type { Streams } from "../streams.js";
import { startBinds } from "./bind.js";
import { createArqs, type CreationCheck } from "./create.js";
import { createArqsForGroups } from "./create-inline.js";
import type { ArqQuota } from "./quota.js";
import { afterUndoneWrites } from "../undone-writes.js";
import { deleteArqs } from "./release.js";

export type PlugSpec = { deviceProfileName: string } | { groups: unknown };

export async function createAndBind(
  s: Streams,
  newId: () => string,
  ctx: CommandContext,
  spec: PlugSpec,
  rawTarget: { instanceUuid: unknown; providers: unknown },
  opts: { allocate?: boolean; takenRefuses?: boolean; catalogue?: BitstreamCatalogue; quota?: ArqQuota; maxBindings?: number; agentDown?: (hostname: string) => string | null } = {},
): Promise<ArqView[]> {
  const target = validatePlugTarget(rawTarget.instanceUuid, rawTarget.providers);
  // Checked by the creation, before it writes: the providers cover the groups, the binds fit one call.
  const check: CreationCheck = (groups, count) => {
    if (target.providers.length > 1) checkProvidersCover(target, groups.length);
    if (count > 0 && opts.maxBindings !== undefined) checkBindingCount("groups" in spec ? "groups" : "deviceProfileName", count, opts.maxBindings);
  };
  const created = "groups" in spec
    ? await createArqsForGroups(s, newId, ctx, spec.groups, opts.quota, check)
    : await createArqs(s, newId, ctx, { deviceProfileName: spec.deviceProfileName, check }, opts.quota);
  if (created.length === 0) return [];
  try {
    return await startBinds(s, ctx, plugBindings(created, target), { allocate: opts.allocate, takenRefuses: opts.takenRefuses, catalogue: opts.catalogue, agentDown: opts.agentDown });
  } catch (err) {
    await deleteArqs(s, ctx, { arqUuids: created.map((a) => a.uuid) }).catch(() => undefined);
    throw afterUndoneWrites(err);
  }
}

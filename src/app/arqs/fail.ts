/** Failing a bind from outside it: a timeout, or a BOUND ARQ whose device or handle was lost. */
import { liveArq } from "../../domain/arqs/decider.js";
import { findDeployable } from "../../domain/inventory/state.js";
import type { ArqState, CommandContext } from "../../domain/shared/types.js";
import { aggregates, type Streams } from "../streams.js";
import { releaseOrphanedHandle } from "./orphaned-handle.js";

/**
 * BIND_STARTED to BIND_FAILED; false when the ARQ is not binding. `fromBound` also fails a BOUND
 * ARQ (its device or handle was lost); its handle stays allocated until it is unbound or deleted.
 * A BIND_STARTED ARQ's handle, if the allocation got that far, is released.
 */
export async function failBind(
  s: Streams,
  ctx: CommandContext,
  arqUuid: string,
  reason: string,
  opts: { fromBound?: boolean; abandonProgramming?: boolean } = {},
): Promise<boolean> {
  const onlyFrom: ArqState[] = opts.fromBound ? ["BIND_STARTED", "BOUND"] : ["BIND_STARTED"];
  const { state } = await s.load(aggregates.arq, arqUuid);
  const arq = liveArq(state);
  if (!arq) return false;
  if (opts.abandonProgramming && arq.state === "BIND_STARTED" && arq.hostname) {
    const abandoned = await abandonRegionOf(s, ctx, arq.hostname, arqUuid, reason);
    if (abandoned) reason = `${reason}: ${abandoned}`;
  }
  const r = await s.handle(aggregates.arq, arqUuid, { type: "FailArqBind", data: { arqUuid, reason, onlyFrom, at: ctx.at } }, ctx);
  if (r.events.length === 0) return false;
  const before = liveArq(r.previousState)!;
  if (before.state === "BIND_STARTED" && before.hostname) await releaseOrphanedHandle(s, ctx, before.hostname, arqUuid);
  return true;
}

/**
 * A bind that times out while its region is being programmed takes the request with it, before the
 * bind fails: the region is then in a known state (bitstream unknown) when Nova hears of the
 * failure, never "bound to a half-programmed region". The other binds that waited fail too.
 */
async function abandonRegionOf(s: Streams, ctx: CommandContext, hostname: string, arqUuid: string, reason: string): Promise<string | null> {
  const { state } = await s.load(aggregates.host, hostname);
  const held = state.allocations.get(arqUuid);
  const region = held && findDeployable(state, held.deployableUuid)?.deployable;
  const request = region?.programming;
  if (!region || !request) return null;
  const what = `the programming of deployable ${region.name} with bitstream ${request.bitstream.id} (request ${request.requestId}) was abandoned`;
  const data = { hostname, deployableUuid: region.uuid, requestId: request.requestId, reason: `${reason}: ${what}`, at: ctx.at };
  await s.handle(aggregates.host, hostname, { type: "AbandonRegionProgramming", data }, ctx);
  return what;
}

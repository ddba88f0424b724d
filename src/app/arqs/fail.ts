/** Failing a bind from outside it: a timeout, or a BOUND ARQ whose device or handle was lost. */
import { liveArq } from "../../domain/arqs/decider.js";
import type { ArqState, CommandContext } from "../../domain/shared/types.js";
import { releaseHandleForArq } from "../inventory.js";
import { aggregates, type Streams } from "../streams.js";

/**
 * BIND_STARTED to BIND_FAILED; false when the ARQ is not binding. `fromBound` also fails a BOUND
 * ARQ (its device or handle was lost); its handle stays allocated until it is unbound or deleted.
 * A BIND_STARTED ARQ's handle, if the allocation got that far, is released.
 */
export async function failBind(s: Streams, ctx: CommandContext, arqUuid: string, reason: string, opts: { fromBound?: boolean } = {}): Promise<boolean> {
  const onlyFrom: ArqState[] = opts.fromBound ? ["BIND_STARTED", "BOUND"] : ["BIND_STARTED"];
  const { state } = await s.load(aggregates.arq, arqUuid);
  if (!liveArq(state)) return false;
  const r = await s.handle(aggregates.arq, arqUuid, { type: "FailArqBind", data: { arqUuid, reason, onlyFrom, at: ctx.at } }, ctx);
  if (r.events.length === 0) return false;
  const before = liveArq(r.previousState)!;
  if (before.state === "BIND_STARTED" && before.hostname) await releaseHandleForArq(s, ctx, before.hostname, arqUuid);
  return true;
}

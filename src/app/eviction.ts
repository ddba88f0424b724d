/**
 * Eviction notices: every holder of a device with a NoExecute taint is asked to move
 * (domain/arqs/eviction.ts). The eviction follower calls it for each such taint; the notices are
 * appended to the holders' ARQ streams as one sequence, decided again when another writer moved
 * one of them meanwhile.
 */
import { decideArq } from "../domain/arqs/decider.js";
import type { ArqEvent } from "../domain/arqs/events.js";
import type { CommandContext } from "../domain/shared/types.js";
import { aggregates, Decided, type Streams } from "./streams.js";

export interface EvictionInput {
  hostname: string;
  deviceUuid: string;
  taintKey: string;
  taintValue: string;
  reason: string;
  /** ISO time by which holders are asked to have let go. */
  deadline: string;
}

/** A notice given: the ARQ and the instance it serves. */
export interface EvictionNotice {
  arqUuid: string;
  instanceUuid: string;
  deadline: string;
}

const ATTEMPTS = 5;

/** The notices given now (none for holders already told of this taint). */
export async function requestEvictions(s: Streams, ctx: CommandContext, input: EvictionInput): Promise<EvictionNotice[]> {
  for (let attempt = 1; ; attempt++) {
    const steps = await decideNotices(s, ctx, input);
    const { refusal } = await s.appendSequence(steps, ctx);
    if (!refusal) return steps.map((st) => ({ arqUuid: st.id, instanceUuid: instanceOf(st), deadline: input.deadline }));
    if (attempt >= ATTEMPTS) throw refusal;
  }
}

async function decideNotices(s: Streams, ctx: CommandContext, input: EvictionInput): Promise<Array<Decided<unknown, ArqEvent>>> {
  const host = (await s.load(aggregates.host, input.hostname)).state;
  const device = host.devices.get(input.deviceUuid);
  // Removed since (a replay of an old taint, or a quick untaint): nobody is asked to move.
  if (!device?.taints.some((t) => t.key === input.taintKey && t.effect === "NoExecute")) return [];
  const rpUuids = [...device.deployables.values()].map((d) => d.rpUuid);
  const holders = [...host.allocations.values()].filter((a) => a.deviceUuid === input.deviceUuid);
  const decided = await Promise.all(
    holders.map(async (a) => {
      const loaded = await s.load(aggregates.arq, a.arqUuid);
      const events = decideArq({ type: "RequestArqEviction", data: { arqUuid: a.arqUuid, ...input, rpUuids, at: ctx.at } }, loaded.state);
      return new Decided(aggregates.arq as never, a.arqUuid, loaded, events) as Decided<unknown, ArqEvent>;
    }),
  );
  return decided.filter((d) => d.events.length > 0);
}

function instanceOf(step: Decided<unknown, ArqEvent>): string {
  const state = step.loaded.state as { status: string; arq?: { instanceUuid: string | null } };
  return state.arq?.instanceUuid ?? "";
}

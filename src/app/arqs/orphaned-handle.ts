/**
 * Releasing a handle an ARQ no longer holds, safely beside other writers. The host stream keeps
 * allocations by ARQ, so "release ARQ X's handle" is only right while X does not hold it: another
 * process may have completed X's bind with that very allocation (the binder's host step committed,
 * an API replica bound the ARQ with it, the binder's ARQ step was refused). So the release is
 * decided on the ARQ as it is now (domain: holdsHandle), and appended together with a check that
 * the ARQ's stream has not moved since (a step with no events at its revision): one commit on
 * lmdb; on EventStoreDB the check comes just before the release, and the invariant checker
 * (reactors/invariants/) fails a BOUND ARQ that lost its handle in the narrow gap between.
 */
import { liveArq } from "../../domain/arqs/decider.js";
import { holdsHandle } from "../../domain/arqs/invariants.js";
import { awaitsPartition } from "../../domain/inventory/partition-record.js";
import { DomainError, stream, type CommandContext } from "../../domain/shared/types.js";
import { conflictBackoff, MAX_ATTEMPTS } from "../handle.js";
import { aggregates, Decided, type Streams } from "../streams.js";

/** Releases the ARQ's handle on the host unless the ARQ holds it; true when it released one. Idempotent. */
export async function releaseOrphanedHandle(s: Streams, ctx: CommandContext, hostname: string, arqUuid: string): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await s.locks.run([stream.arq(arqUuid), stream.host(hostname)], async () => {
      const [arq, host] = await Promise.all([s.load(aggregates.arq, arqUuid), s.load(aggregates.host, hostname)]);
      const a = host.state.allocations.get(arqUuid);
      const live = liveArq(arq.state);
      // No handle yet, but a partition being made for a bind that no longer waits for it: its reservation goes.
      const stillWaiting = live?.state === "BIND_STARTED" && live.hostname === hostname;
      if (a ? holdsHandle(live, { hostname, ...a }) : stillWaiting || !awaitsPartition(host.state, arqUuid)) return "kept" as const;
      const released = aggregates.host.decider.decide({ type: "ReleaseAttachHandle", data: { hostname, arqUuid, at: ctx.at, keepIdlePartitions: s.policies.keepIdlePartitions } }, host.state);
      const { refusal } = await s.appendSequence([new Decided(aggregates.arq, arqUuid, arq, []), new Decided(aggregates.host, hostname, host, released)], ctx);
      return refusal ? ("moved" as const) : ("released" as const);
    });
    if (outcome !== "moved") return outcome === "released";
    if (attempt >= MAX_ATTEMPTS) throw new DomainError("CONFLICT", `gave up releasing the handle of ARQ ${arqUuid} on host ${hostname} after ${attempt} concurrent updates; try again`);
    await conflictBackoff(attempt);
  }
}

/**
 * Appending a plan of decisions over several streams (a bind, a release): the plan as one
 * sequence (one commit on lmdb, step by step on EventStoreDB). A step refused by a concurrent
 * change is decided again from the new state: the plans' decisions are idempotent (a bind already
 * started or a handle already allocated to its ARQ decides nothing new; a release of what is
 * released decides nothing), so what an earlier attempt appended is never done twice.
 */
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import { conflictBackoff, MAX_ATTEMPTS, type DomainEventShape } from "../handle.js";
import type { Decided, Streams } from "../streams.js";

export interface Plan {
  readonly steps: ReadonlyArray<Decided<unknown, DomainEventShape>>;
}

/**
 * Plans and appends until no step is refused; undefined when `plan` finds nothing to do. Each
 * attempt holds the process's locks on `streams` (stream-locks.ts), so only other processes can
 * interleave. `appended` learns each attempt's plan once it was (partly) appended.
 */
export async function appendPlan<P extends Plan>(
  s: Streams,
  ctx: CommandContext,
  streams: readonly string[],
  plan: () => Promise<P | undefined>,
  appended?: (p: P) => void,
): Promise<P | undefined> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await s.locks.run(streams, async () => {
      const p = await plan();
      if (!p) return { done: true, plan: p };
      // `appended` learns what was committed even when the sequence was interrupted (it rejects).
      try {
        const { refusal } = await s.appendSequence(p.steps, ctx);
        return { done: !refusal, plan: p };
      } finally {
        appended?.(p);
      }
    });
    if (outcome.done) return outcome.plan;
    if (attempt >= MAX_ATTEMPTS) throw new DomainError("CONFLICT", `gave up after ${attempt} concurrent updates of the same streams; try again`);
    await conflictBackoff(attempt);
  }
}

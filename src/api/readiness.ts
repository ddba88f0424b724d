/**
 * GET /readyz: ready once the event log answers, every read model is marked serving in the read
 * store (so a store that lost its data is not ready, whichever process looks), and every projection
 * of this process is live.
 */
import type { EventStore } from "../infra/eventstore/port.js";
import type { FollowerStatus } from "../reactors/follower/status.js";
import type { ProjectionStatus } from "../reactors/projector/progress.js";
import type { ReadStore } from "../infra/readstore/port.js";

export interface ReadinessSources {
  store: EventStore;
  readStore: ReadStore;
  /** Every read model the API reads. */
  names: readonly string[];
  /** This process's projections (none when it runs no projector). */
  projections(): ProjectionStatus[];
  /** This process's log followers (the Placement sync, the Nova notifier, the binder, the programming feed): shown, not part of readiness (the API serves while Placement or Nova is down). */
  followers(): readonly FollowerStatus[];
  /** Open acceleratorRequestBound subscriptions in this process. */
  boundSubscriptions(): number;
}

export function readiness(s: ReadinessSources): () => Promise<{ ok: boolean; detail: Record<string, unknown> }> {
  return async () => {
    const [head, serving] = await Promise.all([s.store.headPosition(), s.readStore.serving(s.names)]);
    const projections = s.projections();
    const notServing = s.names.filter((_, i) => !serving[i]);
    return {
      ok: notServing.length === 0 && projections.every((p) => p.state === "live"),
      detail: { eventLog: s.store.kind, head: head?.toString() ?? null, notServing, projections, followers: s.followers(), boundSubscriptions: s.boundSubscriptions() },
    };
  };
}

/** GET /readyz: ready once the event log answers and every projection of this process is live. */
import type { EventStore } from "../eventstore/port.js";
import type { ProjectionStatus } from "../projector/progress.js";

export interface ReadinessSources {
  store: EventStore;
  /** This process's projections (none when it runs no projector). */
  projections(): ProjectionStatus[];
  /** Open acceleratorRequestBound subscriptions in this process. */
  boundSubscriptions(): number;
}

export function readiness(s: ReadinessSources): () => Promise<{ ok: boolean; detail: Record<string, unknown> }> {
  return async () => {
    const head = await s.store.headPosition();
    const projections = s.projections();
    return {
      ok: projections.every((p) => p.state === "live"),
      detail: { eventLog: s.store.kind, head: head?.toString() ?? null, projections, boundSubscriptions: s.boundSubscriptions() },
    };
  };
}

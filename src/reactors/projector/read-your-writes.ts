/**
 * Read-your-writes for the API: a mutation returns once the read models reflect the log up to its
 * head as of the moment it asks. With the projector in this process it waits on it; without (ROLES
 * without projector) it polls the store's checkpoints. The write has committed either way, so
 * models that lag past the timeout are logged, not turned into an error for a write that succeeded.
 */
import type { EventStore } from "../../infra/eventstore/port.js";
import type { ReadStore } from "../../infra/readstore/port.js";
import type { Projector } from "./projector.js";

export interface ReadYourWritesOptions {
  events: EventStore;
  store: ReadStore;
  /** The projector of this process, if it runs one. */
  projector?: Projector;
  /** The read models to wait for (when polling the store). */
  names: readonly string[];
  timeoutMs: number;
  log: { warn(obj: object, msg: string): void };
  /** Waits for more than these models (the API workers: every worker's); default `untilReached` of these options. */
  reached?: (position: bigint) => Promise<void>;
  /** Each wait's seconds (the metrics' histogram). */
  observe?: (seconds: number) => void;
}

const POLL_MS = 5;

/**
 * Resolves once the read models reflect the log up to `position`; rejects after `timeoutMs` (then
 * nobody knows what they show: a caller that needs it fails closed).
 */
export function untilReached(o: Omit<ReadYourWritesOptions, "log">): (position: bigint) => Promise<void> {
  return async (position) => {
    if (o.projector) return o.projector.waitFor(position, { timeoutMs: o.timeoutMs });
    const deadline = Date.now() + o.timeoutMs;
    for (;;) {
      const cps = await o.store.getCheckpoints(o.names);
      if (cps.every((c) => c !== undefined && c >= position)) return;
      if (Date.now() > deadline) throw new Error(`the read models did not reach position ${position} within ${o.timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };
}

export function readYourWrites(o: ReadYourWritesOptions): () => Promise<void> {
  const reached = o.reached ?? untilReached(o);
  return async () => {
    const t0 = performance.now();
    const head = await o.events.headPosition();
    if (head === undefined) return;
    await reached(head).catch(() => o.log.warn({ head: head.toString() }, "read models lag behind a mutation"));
    o.observe?.((performance.now() - t0) / 1000);
  };
}

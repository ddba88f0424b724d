/**
 * What the projector runs. A projection is a read model: a pure function from one event to the
 * writes that bring the model up to date. It never reads (every event carries what its projection
 * needs), so a batch of a thousand events becomes one atomic store call, and replaying the log
 * rebuilds the same model. Hooks let a read model act after the projector (notify, for example)
 * without the projector knowing it.
 */
import type { RecordedEvent } from "../../infra/eventstore/port.js";
import type { Write } from "../../infra/readstore/port.js";

export interface Projection {
  /** Also the hash tag of every key it owns: `{name}:...`. */
  readonly name: string;
  /** Event types it reacts to; the projector does not call `project` for others. */
  readonly eventTypes: readonly string[];
  project(event: RecordedEvent): Write[];
  /**
   * Streams that end: a stream named `prefix`... whose last event is one of `types` takes no more
   * events, and the model then keeps nothing its events wrote (every key and member they wrote is
   * deleted by that event, and no other stream writes them). A replay up to a point leaves out the
   * events of streams that ended by then (ended-streams.ts): an ARQ deleted before the point costs
   * the replay nothing. A claim about the model, checked by test/projector/ended-streams.test.ts.
   */
  readonly ends?: { readonly prefix: string; readonly types: readonly string[] };
}

export interface ProjectorHooks {
  /** Once at start: each projection's stored checkpoint, by name, and the log's head. */
  started?(checkpoints: ReadonlyMap<string, bigint | undefined>, head: bigint | undefined): void;
  /** Before read models are dropped and replayed (a rebuild, a store that lost its data): the log up to `appliedUpTo` was applied before. */
  replaying?(appliedUpTo: bigint | undefined): void;
  /** Before a batch is applied: the read models do not show it yet. */
  beforeApply?(batch: readonly RecordedEvent[]): Promise<void>;
  /** Every running projection has committed the log up to `position`. */
  afterCommit?(position: bigint): Promise<void>;
}

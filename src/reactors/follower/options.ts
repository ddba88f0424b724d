/** What a log follower is given (log-follower.ts), and the defaults of what may be left out. */
import type { EventFilter, EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import type { Logger } from "../../infra/logger.js";
import type { ReadStore, Write } from "../../infra/readstore/port.js";

export interface LogFollowerOptions {
  /** The follower's name (a projection name: [a-z][a-z0-9-]*): its checkpoint's and its status's. */
  name: string;
  events: EventStore;
  /** The ReadStore: where the checkpoint is kept in the "read-store" mode, and the status published. */
  checkpoints: ReadStore;
  /** Where the checkpoint is kept (default "read-store"; see the top of log-follower.ts). */
  checkpointIn?: "read-store" | "event-log";
  filter?: EventFilter;
  /**
   * Acts on a batch (idempotently). Resolves with writes under `{<name>}:` to record atomically
   * with the checkpoint ("read-store" only), or nothing. Throws to have the same batch handed
   * again after a backoff.
   */
  handle(batch: readonly RecordedEvent[], signal: AbortSignal): Promise<readonly Write[] | void>;
  /** "event-log": the handler's state to save with the checkpoint (small JSON; taken between batches). */
  snapshot?(): unknown;
  /** Called at each (re)start from the stored checkpoint, before its first batch, with the state saved with it. */
  resume?(from: bigint | undefined, state: unknown): void;
  log: Logger;
  /** Most events per batch (default 500). */
  maxBatch?: number;
  /**
   * Let the subscription hand over what it already holds (one turn of the event loop) before a
   * batch is taken, so that the events of one commit go in one batch (default false).
   */
  settle?: boolean;
  /** Matching events read ahead of the handler before reading pauses (default 5000). */
  bufferLimit?: number;
  /** Backoff between attempts while the handler or the store fails (default 200 ms to 30 s). */
  backoff?: { minMs?: number; maxMs?: number };
  /** "read-store": how long the follower waits before recording a checkpoint that only passed non-matching events (default 1000 ms). */
  idleCommitMs?: number;
  /** "event-log": the least time between two saves (default 1000 ms). */
  coalesceMs?: number;
  /** How often the head is refreshed and the status published (default 1000 ms; 0: never published). */
  statusEveryMs?: number;
}

type Optional = "filter" | "backoff" | "snapshot" | "resume" | "settle";
export type ResolvedFollowerOptions = Required<Omit<LogFollowerOptions, Optional>> & Pick<LogFollowerOptions, Optional>;

export function withDefaults(options: LogFollowerOptions): ResolvedFollowerOptions {
  // `??`, not a spread: an option passed as undefined (a caller's unset tuning) takes the default.
  return {
    ...options,
    maxBatch: options.maxBatch ?? 500,
    bufferLimit: options.bufferLimit ?? 5000,
    idleCommitMs: options.idleCommitMs ?? 1000,
    coalesceMs: options.coalesceMs ?? 1000,
    statusEveryMs: options.statusEveryMs ?? 1000,
    checkpointIn: options.checkpointIn ?? "read-store",
  };
}

/** What the projector is given (projector.ts), and the defaults of what may be left out. */
import type { EventStore } from "../../infra/eventstore/port.js";
import type { ReadStore } from "../../infra/readstore/port.js";
import type { Projection, ProjectorHooks } from "./projection.js";

export interface ProjectorLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ProjectorOptions {
  events: EventStore;
  /**
   * What a rebuild replays, when it is more than `events`' live log: the embedded log with its
   * hosts' archived periods (src/audit/retention/archived-log.ts, `replayLog`). Default `events`.
   */
  replayLog?: Pick<EventStore, "readAll">;
  store: ReadStore;
  projections: readonly Projection[];
  hooks?: readonly ProjectorHooks[];
  /** Most events per store write while catching up (default 1000). */
  batchSize?: number;
  /** Events per store write in a rebuild (default 2000: fewer, fuller scripts). */
  rebuildBatchSize?: number;
  /** How often the projector refreshes the head, checks that the store still holds its data, and saves checkpoints it moved without writing (default 1000 ms). */
  healthCheckMs?: number;
  log?: ProjectorLogger;
  now?: () => number;
}

export type ResolvedOptions = Required<Omit<ProjectorOptions, "projections" | "replayLog">> & Pick<ProjectorOptions, "replayLog">;

const silent: ProjectorLogger = { info() {}, warn() {}, error() {} };

export function withDefaults(options: ProjectorOptions): ResolvedOptions {
  return { hooks: [], batchSize: 1000, rebuildBatchSize: 2000, healthCheckMs: 1000, log: silent, now: Date.now, ...options };
}

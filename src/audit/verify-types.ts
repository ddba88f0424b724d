/** What `audit verify` takes and answers (verify.ts walks the log, verify-walker.ts checks each event). */
import type { EventStore, RecordedEvent } from "../infra/eventstore/port.js";

export interface ChainBreak {
  position: string;
  stream: string;
  revision: number;
  eventId: string;
  reason: string;
}

export interface VerifyProgress {
  /** Last position checked (decimal string). */
  position: string;
  until: string | null;
  events: number;
}

export interface VerifyOptions {
  /** Start strictly after this position (an earlier verify ended there); default: the start of the log. */
  after?: bigint;
  /** The global chain's value at `after` (what the earlier verify reported); needed to check checkpoints after it. */
  anchor?: string;
  /** Stop at this position (default: the head when the walk starts). */
  until?: bigint;
  /** Events walked before the store's (an archive exported earlier, in position order): see docs/audit.md. */
  prefix?: AsyncIterable<RecordedEvent>;
  pageSize?: number;
  /** Streams whose last hash is kept in memory: at most this many, at least the last half of them (default 100 000). */
  streamCache?: number;
  /** Breaks listed in the report (all are counted). */
  maxBreaks?: number;
  onProgress?: (p: VerifyProgress) => void;
}

export interface VerifyReport {
  ok: boolean;
  /** Events checked. */
  events: number;
  /** Of which carried a hash. */
  hashed: number;
  /** Events written before the chain existed (no hash, before its start): not verifiable. */
  unhashed: { count: number; first: string | null; last: string | null };
  /** Global-chain checkpoints compared. */
  checkpoints: number;
  breaks: number;
  /** The first breaks, in log order. */
  firstBreaks: ChainBreak[];
  /** The global chain's value after the last event checked: the anchor of the next `--after` run, or of an archive. */
  chain: { position: string; hash: string } | null;
  until: string | null;
}

export type VerifiedStore = Pick<EventStore, "readAll" | "readStream" | "readCheckpoints" | "headPosition">;

/**
 * The one rebuild: drop read models and replay the log into them, up to a position. The CLI and
 * the benchmark rebuild while the projector is stopped (up to the head); the running projector
 * rebuilds on request, and when the store lost a model, up to what it had already applied, and
 * its loop goes on from there. A replay never reaches events the projector has not seen, so
 * hooks (notifications) never fire for it.
 */
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import type { Origin, ReadStore, Write } from "../../infra/readstore/port.js";
import { endedStreams } from "./ended-streams.js";
import { projectBatch, type ProjectLogger, type Slot } from "./slots.js";

export interface RebuildProgress {
  projections: string[];
  /** Last position applied (decimal string). */
  position: string;
  headPosition: string | null;
  /** Events read since the rebuild started. */
  events: number;
  elapsedMs: number;
}

export interface ReplayOptions {
  /** Replay the log up to here (inclusive); undefined: nothing to replay. */
  upTo: bigint | undefined;
  /** Events per store write. */
  batchSize: number;
  log: ProjectLogger;
  now: () => number;
  onProgress?: (p: RebuildProgress) => void;
  /** The log replayed, when it is more than `events` (the hosts' archived periods with the live log). */
  source?: Pick<EventStore, "readAll">;
  /** Stamps each checkpoint with its origin (log-origin.ts); without it, checkpoints carry none. */
  origin?: { of(event: Pick<RecordedEvent, "id">): Promise<Origin> };
}

/**
 * Batches in flight: batch N+1 is read, projected and sent while the store applies N (adapters
 * apply calls in order; if N fails, N+1 fails its checkpoint guard). Three rather than two: node
 * and Redis take turns on shared cores, and a deeper queue keeps both busy.
 */
const IN_FLIGHT = 3;

/**
 * Applies one slot's batch. No closure here holds the page or the writes: they are let go once the
 * batch is sent, not when the store answers (what lives that long is copied by every scavenge).
 */
function apply(store: ReadStore, s: Slot, writes: Write[], last: RecordedEvent, expected: bigint | null, origin: Origin | undefined): Promise<void> {
  const { position, id } = last;
  return store.applyBatch(s.projection.name, writes, position, expected, origin).then(() => {
    s.stored = s.processed = position;
    s.storedEvent = s.processedEvent = origin && id;
  });
}

/** What a replay left out: by model, how many ended streams' events it did not replay (ended-streams.ts). */
export type LeftOut = Record<string, number>;

export async function replay(events: EventStore, store: ReadStore, slots: readonly Slot[], opts: ReplayOptions): Promise<LeftOut> {
  const startedAt = opts.now();
  const names = slots.map((s) => s.projection.name);
  for (const s of slots) {
    await store.drop(s.projection.name);
    s.serving = false;
    s.processed = s.stored = s.processedEvent = s.storedEvent = undefined;
    s.failed = undefined;
    s.rebuilding = true;
  }
  // Streams that ended by the point leave nothing in the models that say so: not replayed.
  let ended = new Map<Slot, ReadonlySet<string>>();
  try {
    if (opts.upTo !== undefined) ended = await endedStreams(events, slots, opts.upTo);
    const sent = new Map<Slot, bigint>();
    const committing: Array<Promise<unknown>> = [];
    let after: bigint | undefined;
    let count = 0;
    while (opts.upTo !== undefined && (after === undefined || after < opts.upTo)) {
      const page = (await (opts.source ?? events).readAll({ after, maxCount: opts.batchSize })).filter((e) => e.position <= opts.upTo!);
      if (page.length === 0) break;
      const lastEvent = page.at(-1)!;
      const last = lastEvent.position;
      const origin = await opts.origin?.of(lastEvent);
      const applying: Array<Promise<void>> = [];
      for (const s of slots) {
        if (s.failed) continue;
        const writes = projectBatch(s, page, opts.log, ended.get(s));
        if (writes === undefined) continue;
        const expected = sent.get(s) ?? null;
        sent.set(s, last);
        applying.push(apply(store, s, writes, lastEvent, expected, origin));
      }
      const sending = Promise.all(applying);
      sending.catch(() => undefined); // awaited below; avoid an unhandled rejection meanwhile
      committing.push(sending);
      if (committing.length >= IN_FLIGHT) await committing.shift();
      after = last;
      count += page.length;
      opts.onProgress?.({ projections: names, position: last.toString(), headPosition: opts.upTo.toString(), events: count, elapsedMs: opts.now() - startedAt });
    }
    for (const c of committing) await c;
  } finally {
    for (const s of slots) s.rebuilding = false;
  }
  const failed = slots.filter((s) => s.failed);
  if (failed.length) throw new Error(`rebuild: ${failed.map((s) => `${s.projection.name}: ${s.failed}`).join("; ")}`);
  // Complete up to `upTo`: readers may use the models again (unless the store lost them meanwhile).
  for (const s of slots) s.serving = await store.markServing(s.projection.name, s.stored ?? null);
  return Object.fromEntries([...ended].map(([s, streams]) => [s.projection.name, streams.size]));
}

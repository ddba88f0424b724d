/**
 * How binds ended over a recent window, read from the log itself (so a reload or a restart loses
 * nothing, and no read model grows with it): per-minute counts of BOUND and BIND_FAILED, and the
 * most recent failures with their reasons. The window starts at the last event recorded before
 * its start (`positionAt`), and the read is bounded: past `maxEvents` it says it was cut short.
 */
import type { EventStore, RecordedEvent } from "../infra/eventstore/port.js";

export interface MinuteOutcomes {
  /** The minute's start (ISO-8601, UTC). */
  minute: string;
  bound: number;
  failed: number;
}

export interface BindFailure {
  arqUuid: string;
  instanceUuid: string | null;
  reason: string;
  at: string;
  position: string;
}

export interface BindOutcomes {
  from: string;
  to: string;
  minutes: MinuteOutcomes[];
  bound: number;
  failed: number;
  /** Newest first. */
  recentFailures: BindFailure[];
  /** The window held more outcomes than were read: the counts cover its start up to the last read. */
  truncated: boolean;
}

const MINUTE_MS = 60_000;
export const OUTCOME_TYPES = ["ArqBound", "ArqBindFailed"] as const;

/** One bucket per minute of [now - minutes, now], the outcomes counted by when they were recorded. */
export function bucketOutcomes(events: readonly RecordedEvent[], now: Date, minutes: number, maxFailures: number): Omit<BindOutcomes, "truncated"> {
  const end = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
  const start = end - (minutes - 1) * MINUTE_MS;
  const buckets = Array.from({ length: minutes }, (_, i) => ({ minute: new Date(start + i * MINUTE_MS).toISOString(), bound: 0, failed: 0 }));
  const failures: BindFailure[] = [];
  for (const e of events) {
    const i = Math.floor((e.recordedAt.getTime() - start) / MINUTE_MS);
    if (i < 0 || i >= minutes) continue;
    if (e.type === "ArqBound") buckets[i]!.bound++;
    else if (e.type === "ArqBindFailed") {
      buckets[i]!.failed++;
      const d = e.data as { arqUuid: string; instanceUuid: string | null; reason: string; at: string };
      failures.push({ arqUuid: d.arqUuid, instanceUuid: d.instanceUuid, reason: d.reason, at: e.recordedAt.toISOString(), position: e.position.toString() });
    }
  }
  return {
    from: new Date(start).toISOString(),
    to: new Date(end + MINUTE_MS).toISOString(),
    minutes: buckets,
    bound: buckets.reduce((n, b) => n + b.bound, 0),
    failed: buckets.reduce((n, b) => n + b.failed, 0),
    recentFailures: failures.reverse().slice(0, maxFailures),
  };
}

export async function bindOutcomes(
  store: Pick<EventStore, "positionAt" | "readAll">,
  opts: { minutes: number; now?: Date; maxFailures?: number; maxEvents?: number },
): Promise<BindOutcomes> {
  const now = opts.now ?? new Date();
  const maxEvents = opts.maxEvents ?? 50_000;
  const startMs = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - (opts.minutes - 1) * MINUTE_MS;
  const after = await store.positionAt(new Date(startMs - 1));
  const events = await store.readAll({ after, maxCount: maxEvents + 1, filter: { eventTypes: OUTCOME_TYPES } });
  const truncated = events.length > maxEvents;
  return { ...bucketOutcomes(truncated ? events.slice(0, maxEvents) : events, now, opts.minutes, opts.maxFailures ?? 20), truncated };
}

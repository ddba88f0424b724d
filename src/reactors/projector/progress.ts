/** What the projector tells the rest of the service: how far each read model is, and waits for a position. */
import type { RecordedEvent } from "../../infra/eventstore/port.js";
import { firstAfter } from "../../infra/eventstore/positions.js";
import type { SubscriptionOutage } from "../follower/resuming-subscription.js";
import type { LogReader } from "./log-reader.js";
import type { Slots } from "./slots.js";

export type ProjectionState = "catching-up" | "live" | "rebuilding" | "stopped";

export interface ProjectionStatus {
  name: string;
  /** Position up to which the read model reflects the log (decimal string; null: nothing applied). */
  checkpoint: string | null;
  /** Newest log position the projector knows of (decimal string; null: empty log). */
  headPosition: string | null;
  /** Events between checkpoint and head; estimated (`lagEventsExact` false) for the part not read yet. */
  lagEvents?: number;
  lagEventsExact?: boolean;
  /** How stale the model is: 0 when caught up, else the age of the oldest event it has not applied. */
  lagMs: number;
  state: ProjectionState;
  /** Why the projection stopped (its `project` threw). */
  error?: string;
  /** The projector's subscription to the log is lost and being opened again (absent while it holds). */
  outage?: SubscriptionOutage;
}

interface Waiter {
  position: bigint;
  resolve: () => void;
  reject: (err: unknown) => void;
  timer?: NodeJS.Timeout;
}

/** Callers waiting until every read model reached a position (read-your-writes). */
export class Waiters {
  private waiting: Waiter[] = [];

  wait(position: bigint, timeoutMs?: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const w: Waiter = { position, resolve, reject };
      if (timeoutMs !== undefined) {
        w.timer = setTimeout(() => {
          this.waiting = this.waiting.filter((x) => x !== w);
          reject(new Error(`read models did not reach position ${position} within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      this.waiting.push(w);
    });
  }

  /** Resolves the waiters whose position is reached. */
  settle(reached: (position: bigint) => boolean): void {
    this.waiting = this.waiting.filter((w) => {
      if (!reached(w.position)) return true;
      if (w.timer) clearTimeout(w.timer);
      w.resolve();
      return false;
    });
  }

  rejectAll(err: Error): void {
    for (const w of this.waiting.splice(0)) {
      if (w.timer) clearTimeout(w.timer);
      w.reject(err);
    }
  }
}

/** The line a long catch-up logs every few seconds: the head it goes to, and how far behind the furthest model is. */
export function logCatchUp(log: { info(obj: object, msg: string): void }, head: bigint, status: readonly ProjectionStatus[]): void {
  log.info({ head: head.toString(), eventsBehind: status.reduce((n, s) => Math.max(n, s.lagEvents ?? 0), 0) }, "catching up with the event log");
}

/** Each projection's status; `pending` is what the reader queued and the loop holds, in log order. */
export function statusOf(slots: Slots, reader: LogReader, pending: readonly RecordedEvent[], running: boolean, behindSince: number | undefined, now: number): ProjectionStatus[] {
  const head = reader.head;
  const unread = reader.unread();
  const outage = reader.outage;
  return slots.all.map((s) => {
    const caughtUp = head === undefined || (s.processed !== undefined && s.processed >= head);
    let lagEvents = 0;
    let lagMs = 0;
    if (!caughtUp) {
      const first = firstAfterOrStart(pending, s.processed);
      lagEvents = pending.length - first + unread.events;
      const oldest = pending[first];
      lagMs = Math.max(0, now - (oldest ? oldest.recordedAt.getTime() : (behindSince ?? now)));
    }
    const state: ProjectionStatus["state"] = !running || s.failed ? "stopped" : s.rebuilding ? "rebuilding" : caughtUp ? "live" : "catching-up";
    return {
      name: s.projection.name,
      checkpoint: s.processed?.toString() ?? null,
      headPosition: head?.toString() ?? null,
      lagEvents,
      lagEventsExact: caughtUp || unread.exact,
      lagMs,
      state,
      ...(s.failed ? { error: s.failed } : {}),
      ...(outage ? { outage } : {}),
    };
  });
}

/** Index of the first event after `position` in a position-ordered list. */
const firstAfterOrStart = (events: readonly RecordedEvent[], position: bigint | undefined): number => (position === undefined ? 0 : firstAfter(events, position));

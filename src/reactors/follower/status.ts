/**
 * A log follower's status: its shape, and its publication to the ReadStore (under
 * `<name>-status`) so that a CLI in another process can show it (readFollowerStatus).
 */
import type { ReadStore } from "../../infra/readstore/port.js";
import { keyPrefix } from "../../infra/readstore/keys-and-cursors.js";
import type { ResumingSubscription, SubscriptionOutage } from "./resuming-subscription.js";

export type FollowerState = "starting" | "catching-up" | "live" | "retrying" | "stopped";

/** The shape of a projection's status row (readstore/runner.ts), plus the retry details. */
export interface FollowerStatus {
  name: string;
  state: FollowerState;
  /** Position up to which every event was handled and recorded (decimal string; null: none). */
  checkpoint: string | null;
  /** Newest log position known (decimal string; null: empty log). */
  headPosition: string | null;
  /** Matching events received and not handled yet. */
  lagEvents: number;
  lagEventsExact: boolean;
  /** Age of the oldest event not handled yet; 0 when caught up. */
  lagMs: number;
  /** Consecutive failed attempts at the current batch. */
  retries: number;
  lastError: { message: string; at: string } | null;
  /** The last error while it still holds the follower back (as a projection row's `error`). */
  error?: string;
  /** When this status was taken (ISO-8601). */
  at: string;
  /** Its subscription to the log is lost and being opened again (absent while it holds). */
  outage?: SubscriptionOutage;
}

/**
 * The status of a follower that keeps no checkpoint and no queue of its own (the binder, the
 * programming feed): how far its subscription has read, and whether it is lost.
 */
export function subscriptionStatus(name: string, sub: ResumingSubscription | undefined, live: boolean): FollowerStatus {
  const outage = sub?.outage;
  const state: FollowerState = sub === undefined ? "stopped" : outage ? "retrying" : live ? "live" : "catching-up";
  return {
    name,
    state,
    checkpoint: sub?.position?.toString() ?? null,
    headPosition: null,
    lagEvents: 0,
    lagEventsExact: false,
    lagMs: 0,
    retries: outage?.attempts ?? 0,
    lastError: outage ? { message: outage.lastError, at: outage.since } : null,
    ...(outage ? { error: outage.lastError, outage } : {}),
    at: new Date().toISOString(),
  };
}

const statusName = (name: string) => `${name}-status`;

/** Publishes one follower's status, best effort: the status doc has its own version counter as its checkpoint. */
export class StatusPublisher {
  private version: bigint | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ReadStore,
    private readonly name: string,
  ) {}

  /** Publishes after the publications under way (one at a time). */
  publish(status: () => FollowerStatus): Promise<void> {
    this.chain = this.chain.then(() => this.once(status()));
    return this.chain;
  }

  private async once(status: FollowerStatus): Promise<void> {
    const name = statusName(this.name);
    try {
      this.version ??= (await this.store.getCheckpoint(name)) ?? 0n;
      const next = this.version + 1n;
      await this.store.applyBatch(name, [{ op: "put", key: `${keyPrefix(name)}status`, fields: { status } }], next);
      this.version = next;
    } catch {
      this.version = undefined;
    }
  }
}

/** The status a follower last published (another process's, e.g. for `projections status`). */
export async function readFollowerStatus(store: ReadStore, name: string): Promise<FollowerStatus | null> {
  const n = statusName(name);
  const [doc] = await store.getDocs([`${keyPrefix(n)}status`]);
  return (doc?.status as FollowerStatus | undefined) ?? null;
}

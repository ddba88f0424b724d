/**
 * Which streams end, and when: a stream whose last event says it takes no more events, and whose
 * end is older than the retention period, leaves the live log for the archive (retention.ts).
 *
 *   arq-<uuid>                ArqDeleted: the decider takes nothing after it (an ARQ's uuid is never reused)
 *   deviceProfile-<name>      DeviceProfileDeleted: a deleted profile (inline ones go with their last
 *                             ARQ); the name may be taken again later, by a new stream from revision 0
 *   idempotency-<sha256>      its last claim expired (expiresAt): the key is free again
 *
 * A model that folds these streams keeps nothing of them after that end (projections/arqs declares
 * it as `ends`; the device-profiles model deletes every key DeviceProfileDeleted names; no model
 * reads idempotency keys), so a read model built from the live log alone is the same.
 * Not ending: host streams (a host's programming requests are events of its stream, which lives
 * as long as the host), instances, uuid claims, the bitstream catalogue.
 */
import { streamPrefix } from "../../domain/shared/types.js";
import type { EventStore, ReadStreamEndsOptions, RecordedEvent, StreamEnd } from "../../infra/eventstore/port.js";

export interface EndRule {
  prefix: string;
  /** Last event types that can end the stream. */
  types: readonly string[];
  /** When the stream ended, from its events (default: when its last event was recorded). */
  endedAt?(events: readonly RecordedEvent[]): Date;
}

const lastClaimExpiry = (events: readonly RecordedEvent[]): Date => {
  const claim = events.findLast((e) => e.type === "IdempotencyKeyClaimed");
  const expires = Date.parse(String((claim?.data as { expiresAt?: unknown } | undefined)?.expiresAt));
  const last = events.at(-1)!.recordedAt.getTime();
  // A claim without a readable expiry is kept (fails closed): the key's end is not known.
  return new Date(Number.isFinite(expires) ? Math.max(expires, last) : Number.POSITIVE_INFINITY);
};

export const END_RULES: readonly EndRule[] = [
  { prefix: streamPrefix.arq, types: ["ArqDeleted"] },
  { prefix: streamPrefix.deviceProfile, types: ["DeviceProfileDeleted"] },
  { prefix: streamPrefix.idempotency, types: ["IdempotencyKeyClaimed", "IdempotentAnswerRecorded"], endedAt: lastClaimExpiry },
];

/** The stream ends retention walks: the store's own list, or the archiving's where the store keeps none (EventStoreDB). */
export async function streamEnds(store: EventStore, o: ReadStreamEndsOptions): Promise<StreamEnd[] | undefined> {
  return (await store.readStreamEnds(o)) ?? (await store.archiving?.readStreamEnds?.(o));
}

/** Positions retention leaves in the live log. */
export interface Pinned {
  has(position: bigint): boolean;
}

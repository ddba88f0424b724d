/** A point in the log as people name it: a position ("1234") or an ISO-8601 time (the store's clock). */
import { DomainError } from "../domain/shared/types.js";
import type { EventStore } from "../infra/eventstore/port.js";

const POSITION = /^\d{1,20}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T/;

/** The position `text` names: itself, or the last event recorded at or before the time (0: none). */
export async function resolvePoint(store: Pick<EventStore, "positionAt">, text: string, field: string): Promise<bigint> {
  if (POSITION.test(text)) return BigInt(text);
  const time = TIME.test(text) ? new Date(text) : new Date(Number.NaN);
  if (Number.isNaN(time.getTime())) {
    throw new DomainError(
      "BAD_USER_INPUT",
      `${field} must be a log position (a decimal string such as "1234") or an ISO-8601 time such as "2026-11-24T14:03:00Z"; got ${JSON.stringify(text)}`,
      field,
    );
  }
  return (await store.positionAt(time)) ?? 0n;
}

/**
 * Idempotency keys: a command sent with a key is claimed first, runs with ids derived from the
 * claim, and its answer is recorded; the same key and request again (a retry after a lost answer)
 * gets that answer and writes nothing. A key names one request: used for another while it lives,
 * it is refused. A claim without an answer (the first attempt crashed or is still running) lets the
 * command run again with the same ids, which converges on what the first attempt wrote.
 */
import { assertNever, type Decider } from "../shared/decider.js";
import { DomainError } from "../shared/types.js";
import type { IdempotencyEvent } from "./events.js";

export interface IdempotencyClaim {
  fingerprint: string;
  operation: string;
  expiresAt: string;
  /** The claim's revision in its stream: ids derived from it differ after the key expired once. */
  revision: number;
  answered: boolean;
  answer: unknown;
}

export interface IdempotencyState {
  claim: IdempotencyClaim | null;
  /** Events folded so far (the next claim's revision). */
  events: number;
}

export type IdempotencyCommand =
  | { type: "ClaimKey"; data: { keyHash: string; fingerprint: string; operation: string; expiresAt: string; at: string } }
  | { type: "RecordAnswer"; data: { keyHash: string; answer: unknown; at: string } };

/** Where a request with this key stands. */
export type KeyStatus =
  | { kind: "new" }
  | { kind: "answered"; answer: unknown }
  /** Claimed, no answer yet: run again (with the claim's ids). */
  | { kind: "claimed"; revision: number };

export function keyStatus(state: IdempotencyState, fingerprint: string, at: string): KeyStatus {
  const c = state.claim;
  if (!c || c.expiresAt <= at) return { kind: "new" };
  if (c.fingerprint !== fingerprint) {
    throw new DomainError(
      "CONFLICT",
      `this Idempotency-Key was used for another request (${c.operation}) until ${c.expiresAt}; use a new key for a new request`,
      "idempotencyKey",
    );
  }
  return c.answered ? { kind: "answered", answer: c.answer } : { kind: "claimed", revision: c.revision };
}

export const initialIdempotencyState = (): IdempotencyState => ({ claim: null, events: 0 });

export function evolveIdempotency(state: IdempotencyState, event: IdempotencyEvent): IdempotencyState {
  switch (event.type) {
    case "IdempotencyKeyClaimed": {
      const { fingerprint, operation, expiresAt } = event.data;
      return { claim: { fingerprint, operation, expiresAt, revision: state.events, answered: false, answer: null }, events: state.events + 1 };
    }
    case "IdempotentAnswerRecorded":
      return { claim: state.claim && { ...state.claim, answered: true, answer: event.data.answer }, events: state.events + 1 };
    default:
      return assertNever(event);
  }
}

export function decideIdempotency(command: IdempotencyCommand, state: IdempotencyState): IdempotencyEvent[] {
  switch (command.type) {
    case "ClaimKey": {
      const { fingerprint, at } = command.data;
      // A live claim for this request stands (a concurrent retry claimed it first); another request's is refused.
      if (keyStatus(state, fingerprint, at).kind !== "new") return [];
      return [{ type: "IdempotencyKeyClaimed", data: { ...command.data } }];
    }
    case "RecordAnswer":
      if (!state.claim || state.claim.answered) return [];
      return [{ type: "IdempotentAnswerRecorded", data: { ...command.data } }];
    default:
      return assertNever(command);
  }
}

export const idempotencyDecider: Decider<IdempotencyCommand, IdempotencyState, IdempotencyEvent> = {
  initialState: initialIdempotencyState,
  evolve: evolveIdempotency,
  decide: decideIdempotency,
};

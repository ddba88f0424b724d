/** Stream `idempotency-<key hash>`: a client's idempotency key, the request it covers and its first answer. */
export interface IdempotencyKeyClaimed {
  type: "IdempotencyKeyClaimed";
  data: {
    /** SHA-256 of the principal and the key (the key itself is not kept). */
    keyHash: string;
    /** What the request was: the operation and its arguments, hashed. */
    fingerprint: string;
    operation: string;
    /** After this, the key may be used for another request. */
    expiresAt: string;
    at: string;
  };
}

export interface IdempotentAnswerRecorded {
  type: "IdempotentAnswerRecorded";
  data: { keyHash: string; answer: unknown; at: string };
}

export type IdempotencyEvent = IdempotencyKeyClaimed | IdempotentAnswerRecorded;

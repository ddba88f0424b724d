/**
 * Running a command under an idempotency key (domain/idempotency): the key is claimed just before
 * the command's first write, the command runs with ids derived from the claim, and its answer is
 * recorded. A retry after a lost answer gets the recorded answer and writes nothing; a retry after a
 * crash between the claim and the answer runs the command again with the same ids (`resuming`),
 * which converges on what the first attempt wrote. Keys are per principal: the stream is named
 * after SHA-256(principal, key), and the key itself is not kept.
 */
import { v5 } from "uuid";
import { keyStatus } from "../domain/idempotency/decider.js";
import { DomainError, type CommandContext } from "../domain/shared/types.js";
import { sha256Hex as sha256 } from "../domain/shared/sha256.js";
import type { AppendStep } from "../infra/eventstore/port.js";
import { toNewEvent } from "./handle.js";
import { aggregates, type Streams } from "./streams.js";

export interface IdempotentRequest {
  /** The client's key (Idempotency-Key): 1 to 255 printable ASCII characters. */
  key: string;
  /** The operation, for messages ("createAcceleratorRequests", "POST /v2/accelerator_requests"). */
  operation: string;
  /** The operation and its arguments, canonical: the same request gives the same text. */
  request: unknown;
  /** How long the key is remembered. */
  ttlMs: number;
}

export interface IdempotentResult<T> {
  answer: T;
  /** The answer of an earlier attempt: nothing was written now. */
  replayed: boolean;
}

/** Ids of one keyed command: the same key and claim give the same ids, in the same order. */
const ID_NAMESPACE = "6f0f1d38-6a1e-5f0c-9d8b-2f1a0c3b4e5d";

export function checkIdempotencyKey(key: unknown): string {
  if (typeof key !== "string" || !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new DomainError("BAD_USER_INPUT", "an Idempotency-Key is 1 to 255 printable ASCII characters without spaces (a uuid is a good one)", "idempotencyKey");
  }
  return key;
}

export async function idempotent<T>(
  s: Streams,
  ctx: CommandContext,
  req: IdempotentRequest,
  run: (keyed: { streams: Streams; newId: () => string }, resuming: boolean) => Promise<T>,
): Promise<IdempotentResult<T>> {
  const key = checkIdempotencyKey(req.key);
  const keyHash = sha256(`${ctx.principal}\u0000${key}`);
  const fingerprint = sha256(canonical(req.request));
  const loaded = await s.load(aggregates.idempotency, keyHash);
  const status = keyStatus(loaded.state, fingerprint, ctx.at);
  if (status.kind === "answered") return { answer: status.answer as T, replayed: true };
  const resuming = status.kind === "claimed";
  let claimed = resuming;
  const beingHandled = () => new DomainError("CONFLICT", "a request with this Idempotency-Key is being handled right now; ask again shortly for its answer", "idempotencyKey");
  // The claim goes ahead of the command's first write, in the same commit: a command refused
  // before it writes (bad input, no permission) leaves nothing behind, not even the claim.
  const claim = async (): Promise<AppendStep> => {
    const expiresAt = new Date(Date.parse(ctx.at) + req.ttlMs).toISOString();
    const events = aggregates.idempotency.decider.decide({ type: "ClaimKey", data: { keyHash, fingerprint, operation: req.operation, expiresAt, at: ctx.at } }, loaded.state);
    if (events.length === 0) throw beingHandled();
    claimed = true;
    const stream = aggregates.idempotency.streamName(keyHash);
    return { stream, events: events.map((e) => toNewEvent(e, ctx)), expectedRevision: loaded.revision < 0 ? "no_stream" : loaded.revision };
  };
  let n = 0;
  // Ids follow the claim (the key's next claim after an expiry gives others).
  const seed = `${keyHash}:${status.kind === "claimed" ? status.revision : loaded.state.events}`;
  const newId = () => v5(`${seed}:${n++}`, ID_NAMESPACE);
  const answer = await run({ streams: resuming ? s : s.beforeFirstWrite(claim, beingHandled), newId }, resuming);
  // A command that wrote nothing has nothing to replay: asked again, it answers again.
  if (claimed) {
    const recorded = JSON.parse(JSON.stringify(answer ?? null)) as unknown;
    await s.handle(aggregates.idempotency, keyHash, { type: "RecordAnswer", data: { keyHash, answer: recorded, at: ctx.at } }, ctx);
  }
  return { answer, replayed: false };
}


/** JSON with object keys sorted, so that the same arguments in another order are the same request. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

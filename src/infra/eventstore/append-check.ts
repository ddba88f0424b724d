import { DuplicateEventIdError, WrongExpectedRevisionError, type ExpectedRevision, type NewEvent } from "./port.js";

/** The expected-revision rule every adapter applies; `current` is undefined for a missing stream. */
export function checkExpectedRevision(stream: string, expected: ExpectedRevision, current: number | undefined): void {
  const actual = current ?? "no_stream";
  const ok =
    expected === "any" ||
    (expected === "no_stream" && current === undefined) ||
    (expected === "stream_exists" && current !== undefined) ||
    (typeof expected === "number" && current === expected);
  if (!ok) throw new WrongExpectedRevisionError(stream, expected, actual);
}

export interface StoredIdRef {
  stream: string;
  revision: number;
  position: bigint;
}

/**
 * Idempotent retry: appending events whose ids are already stored, in the same stream, in the same
 * order, returns the original result instead of writing twice. Returns undefined when the ids are new.
 */
export function checkRetry(
  stream: string,
  events: readonly NewEvent[],
  lookup: (id: string) => StoredIdRef | undefined,
): { revision: number; position: bigint } | undefined {
  // One append naming an id twice would store two events under one id: no retry can be exact.
  if (events.length > 1) {
    const seen = new Set<string>();
    for (const e of events) {
      if (seen.has(e.id)) throw new DuplicateEventIdError(e.id, stream);
      seen.add(e.id);
    }
  }
  const first = events[0] && lookup(events[0].id);
  if (!first) {
    for (const e of events) if (lookup(e.id)) throw new DuplicateEventIdError(e.id, stream);
    return undefined;
  }
  let last = first;
  for (let i = 0; i < events.length; i++) {
    const ref = lookup(events[i]!.id);
    if (!ref || ref.stream !== stream || ref.revision !== first.revision + i) {
      throw new DuplicateEventIdError(events[i]!.id, stream);
    }
    last = ref;
  }
  return { revision: last.revision, position: last.position };
}

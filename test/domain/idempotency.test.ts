import { describe, expect, it } from "vitest";
import type { IdempotencyEvent } from "../../src/domain/idempotency/events.js";
import { idempotencyDecider, keyStatus, type IdempotencyState } from "../../src/domain/idempotency/decider.js";
import { deciderSpec, expectDomainError } from "./decider-spec.js";

const spec = deciderSpec(idempotencyDecider);
const keyHash = "hash-1";
const T0 = "2026-03-01T10:00:00.000Z";
const EXPIRES = "2026-03-01T10:01:00.000Z";
const JUST_BEFORE = "2026-03-01T10:00:59.999Z";
const JUST_AFTER = "2026-03-01T10:01:00.001Z";

const claim = (fingerprint: string, at = T0, expiresAt = EXPIRES) => ({
  type: "ClaimKey" as const,
  data: { keyHash, fingerprint, operation: "createAcceleratorRequests", expiresAt, at },
});
const claimed = (fingerprint: string, at = T0, expiresAt = EXPIRES): IdempotencyEvent => ({ type: "IdempotencyKeyClaimed", data: claim(fingerprint, at, expiresAt).data });
const record = (answer: unknown, at = T0) => ({ type: "RecordAnswer" as const, data: { keyHash, answer, at } });
const recorded = (answer: unknown, at = T0): IdempotencyEvent => ({ type: "IdempotentAnswerRecorded", data: { keyHash, answer, at } });
const fold = (events: IdempotencyEvent[]): IdempotencyState => spec.given(events).state();

describe("idempotency decider: recording the answer", () => {
  it("records the answer of a claimed key", () => {
    spec.given([claimed("fp-a")]).when(record(["arq-1"])).then([recorded(["arq-1"])]);
  });

  it("refuses to record a second answer: the first one stays the key's answer", () => {
    spec.given([claimed("fp-a"), recorded(["arq-1"])]).when(record(["arq-2"])).thenNothing();
    expect(keyStatus(fold([claimed("fp-a"), recorded(["arq-1"])]), "fp-a", T0)).toEqual({ kind: "answered", answer: ["arq-1"] });
  });

  it("records nothing for a key never claimed", () => {
    spec.given([]).when(record(["arq-1"])).thenNothing();
  });

  it("a claim without an answer lets the command run again with the claim's revision", () => {
    expect(keyStatus(fold([claimed("fp-a")]), "fp-a", T0)).toEqual({ kind: "claimed", revision: 0 });
    spec.given([claimed("fp-a")]).when(claim("fp-a")).thenNothing();
  });
});

describe("idempotency decider: the key lives until its expiry instant, not through it", () => {
  const answered = [claimed("fp-a"), recorded(["arq-1"])];

  it("a millisecond before expiry, the same request gets the answer and another request is refused", () => {
    expect(keyStatus(fold(answered), "fp-a", JUST_BEFORE)).toEqual({ kind: "answered", answer: ["arq-1"] });
    expectDomainError(() => keyStatus(fold(answered), "fp-b", JUST_BEFORE), "CONFLICT", "idempotencyKey", /another request \(createAcceleratorRequests\) until 2026-03-01T10:01:00.000Z/);
    spec.given(answered).when(claim("fp-b", JUST_BEFORE)).thenThrows("CONFLICT", "idempotencyKey");
    spec.given(answered).when(claim("fp-a", JUST_BEFORE)).thenNothing();
  });

  it("exactly at the expiry instant, the key is new: any request may claim it", () => {
    expect(keyStatus(fold(answered), "fp-a", EXPIRES)).toEqual({ kind: "new" });
    expect(keyStatus(fold(answered), "fp-b", EXPIRES)).toEqual({ kind: "new" });
    spec.given(answered).when(claim("fp-b", EXPIRES, JUST_AFTER)).then([claimed("fp-b", EXPIRES, JUST_AFTER)]);
  });

  it("a claim after expiry gets a new revision and forgets the old answer", () => {
    const again = [...answered, claimed("fp-a", EXPIRES, JUST_AFTER)];
    expect(keyStatus(fold(again), "fp-a", EXPIRES)).toEqual({ kind: "claimed", revision: 2 });
    spec.given(again).when(record(["arq-9"], EXPIRES)).then([recorded(["arq-9"], EXPIRES)]);
  });
});

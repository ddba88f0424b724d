import { describe, expect, it } from "vitest";
import { summarize } from "../../src/audit/summary.js";

const meta = (principal: string, roles?: string[]) => ({ principal, ...(roles ? { roles } : {}), correlationId: "c", causationId: "c", at: "2026-11-25T00:00:00.000Z" });

describe("one-line summaries", () => {
  it("tell a domain event with who did it", () => {
    const e = { type: "IdempotencyKeyClaimed", stream: "idempotency-ab", data: { keyHash: "ab".repeat(32), fingerprint: "f", operation: "bindAcceleratorRequests", expiresAt: "2026-11-26T00:00:00.000Z", at: "x" }, metadata: meta("nova", ["service"]) };
    expect(summarize(e)).toBe(`idempotency key ${"ab".repeat(6)}… claimed for bindAcceleratorRequests (until 2026-11-26T00:00:00.000Z) by nova (service)`);
  });

  it("tell the service's own bookkeeping (a follower's checkpoint, the global chain's), and name any other event by type and stream", () => {
    expect(summarize({ type: "FollowerCheckpointed", stream: "follower-nova", data: { position: "42", at: "x" }, metadata: meta("system:nova") })).toBe(
      "nova follower checkpointed at position 42 by system:nova",
    );
    expect(summarize({ type: "GlobalChainCheckpointed", stream: "chain-checkpoints", data: { position: "4096", hash: "ab" }, metadata: meta("system:chain-keeper") })).toBe(
      "global hash chain checkpointed at position 4096 by system:chain-keeper",
    );
    expect(summarize({ type: "Unknown", stream: "other-1", data: {}, metadata: meta("x") })).toBe("Unknown in other-1 by x");
  });
});

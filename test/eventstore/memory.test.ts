import { describe, expect, it } from "vitest";
import { MemoryEventStore } from "../../src/eventstore/memory.js";

describe("memory event store (smoke; the full contract suite lives in contract.ts)", () => {
  it("appends and reads back a stream", async () => {
    const store = new MemoryEventStore();
    const meta = { principal: "t", correlationId: "c", causationId: "c", at: "2026-01-01T00:00:00Z" };
    await store.append("s-1", [{ id: "e1", type: "A", data: { n: 1 }, metadata: meta }], "no_stream");
    const events = await store.readStream("s-1");
    expect(events.map((e) => [e.type, e.revision])).toEqual([["A", 0]]);
  });
});

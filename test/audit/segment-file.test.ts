import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import { segmentEvents, segmentFileName, writeSegment } from "../../src/audit/retention/segment-file.js";

const event = (i: number): RecordedEvent => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  stream: `arq-${i % 50}`,
  revision: Math.floor(i / 50),
  position: BigInt(i + 1),
  type: "ArqCreated",
  data: { n: i, note: `event number ${i} of a segment large enough to take many reads` },
  metadata: { principal: "system:test", correlationId: `req-${i}`, causationId: `req-${i}`, at: new Date(1_700_000_000_000 + i).toISOString() },
  recordedAt: new Date(1_700_000_000_000 + i),
});

describe("a segment file read back", () => {
  const late: unknown[] = [];
  const onError = (err: unknown): void => void late.push(err);
  beforeEach(() => {
    late.length = 0;
    process.on("uncaughtException", onError);
  });
  afterEach(() => void process.off("uncaughtException", onError));

  it("gives back every event it was written with", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segment-"));
    const events = Array.from({ length: 3000 }, (_, i) => event(i));
    await writeSegment(dir, segmentFileName(1), events, { refs: {}, streams: {} });
    const read: RecordedEvent[] = [];
    for await (const e of segmentEvents(join(dir, segmentFileName(1)))) read.push(e);
    expect(read).toEqual(events);
  });

  it("read in part, or damaged anywhere, fails only to its reader and never later to nobody", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segment-"));
    const file = segmentFileName(1);
    await writeSegment(dir, file, Array.from({ length: 20_000 }, (_, i) => event(i)), { refs: {}, streams: {} });
    const whole = readFileSync(join(dir, file));
    const outcomes = new Map<string, number>();
    for (let k = 1; k < 60; k++) {
      const bytes = Buffer.from(whole);
      bytes[Math.floor((bytes.length * k) / 60)]! ^= 0x01;
      writeFileSync(join(dir, file), bytes);
      for (const stopAfter of [3, Number.POSITIVE_INFINITY]) {
        let n = 0;
        let outcome = "read";
        try {
          for await (const _ of segmentEvents(join(dir, file))) if (++n >= stopAfter) break;
        } catch {
          outcome = "failed";
        }
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    // Damage shows to the reader that reads on (the archive's SHA-256 check finds the rest)...
    expect(outcomes.get("failed")).toBeGreaterThan(0);
    // ...and a decompression error after a reader stopped is never thrown at the process.
    expect(late).toEqual([]);
  });
});

/**
 * Verify's page-at-a-time hashing (src/audit/page-hashes.ts) gives the answer of hashing each
 * event alone: also for data made to hold a row's end, for a hash a hostile writer made of a row
 * cut short, for changed events, and for events it cannot foresee the previous hash of.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { matchedHashes } from "../../src/audit/page-hashes.js";
import { verifyLog } from "../../src/audit/verify.js";
import { eventHash, GENESIS, versionTwoHash, versionTwoRow } from "../../src/infra/eventstore/chain.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";

const meta = { principal: "admin", correlationId: "c-1", causationId: "c-1", at: "2026-11-24T14:03:00.000Z" };

/** One stream's events, hashed as a store hashes them (version 2); `data(revision, previous)` gives each event's data. */
function stream(name: string, count: number, data: (revision: number, previous: string) => unknown): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  let previous = GENESIS;
  for (let r = 0; r < count; r++) {
    const e: RecordedEvent = { id: randomUUID(), stream: name, revision: r, position: BigInt(r + 1), type: "T", data: data(r, previous), metadata: meta, recordedAt: new Date(), chainVersion: 2 };
    e.hash = eventHash(previous, e);
    previous = e.hash;
    out.push(e);
  }
  return out;
}

const previousOf = (events: readonly RecordedEvent[]) => events.map((_, i) => (i === 0 ? GENESIS : events[i - 1]!.hash));

describe("page hashes", () => {
  it("match each event's own hash", () => {
    const events = stream("s", 20, (r) => ({ i: r, note: `event ${r}`, nested: { list: [r, "x"] } }));
    expect(matchedHashes(events, previousOf(events))).toEqual(events.map(() => true));
  });

  it("data that holds what a row ends with, or a separator of an earlier page, still matches: rows are cut at this page's separator", () => {
    // `[0, revision, previous]` stringifies to `[0,5,"<previous>"]`, which holds `,5,"<previous>"]`, the end of the row.
    const events = stream("s", 8, (r, previous) => (r % 3 === 1 ? { tail: [0, r, previous] } : { i: r }));
    expect(matchedHashes(events, previousOf(events))).toEqual(events.map(() => true));
    const separators = stream("t", 4, (r) => ({ list: ["x", randomUUID().replace(/-/g, ""), `${r}`] }));
    expect(matchedHashes(separators, previousOf(separators))).toEqual([true, true, true, true]);
  });

  it("a hash made of a row cut short at a marker in its data is not taken for the row's (the rest of the data would be unchecked)", () => {
    // A hostile writer stores, as the event's hash, the SHA-256 of its row's text up to a marker
    // in its data; the data after the marker would be covered by nothing.
    const events = stream("s", 3, (r) => ({ i: r }));
    const previous = previousOf(events);
    const e = events[1]!;
    e.data = { head: [0, e.revision, previous[1]], tail: "changed at will" };
    const text = JSON.stringify(versionTwoRow(previous[1]!, e));
    const short = text.slice(0, text.indexOf(`,${e.revision},"${previous[1]}"]`) + `,${e.revision},"${previous[1]}"]`.length);
    expect(short.length).toBeLessThan(text.length);
    e.hash = versionTwoHash(short);
    events[2] = stream("s", 3, (r) => ({ i: r }))[2]!; // its own link is not the point here
    expect(matchedHashes(events, previous)[1]).toBe(false);
  });

  it("a changed event does not match; unknown previous hashes and version 1 events are not hashed here", () => {
    const events = stream("s", 6, (r) => ({ i: r }));
    events[2] = { ...events[2]!, data: { i: 99 } };
    events[4] = { ...events[4]!, chainVersion: undefined };
    const previous = previousOf(events);
    previous[5] = undefined;
    expect(matchedHashes(events, previous)).toEqual([true, true, false, true, false, false]);
  });

  it("verify answers the same: crafted data verifies, a changed event is found at that event", async () => {
    const store = new MemoryEventStore();
    for (let r = 0; r < 40; r++) {
      const [last] = await store.readStream(`s-${r % 2}`, { direction: "backwards", maxCount: 1 });
      const previous = last?.hash ?? GENESIS;
      await store.append(`s-${r % 2}`, [{ id: randomUUID(), type: "T", data: { tail: [0, last ? last.revision + 1 : 0, previous] }, metadata: meta }], "any");
    }
    expect(await verifyLog(store, { pageSize: 7 })).toMatchObject({ ok: true, events: 40, hashed: 40 });
    const log = await store.readAll();
    (log[17]!.data as { tail: unknown[] }).tail[0] = 1; // the memory store hands out its own objects
    const report = await verifyLog(store, { pageSize: 7 });
    expect(report).toMatchObject({ ok: false, breaks: 1 });
    expect(report.firstBreaks[0]!.position).toBe("18");
  });
});

/**
 * The live audit feed (subscription events): it catches up from a position and goes on live; a
 * client that loses its connection under load resumes from the last position it saw and gets
 * every event once, in order.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { NewEvent } from "../../src/infra/eventstore/port.js";
import { collect, startTestService, type TestService } from "../api/harness.js";

const FEED = `subscription($types: [String!], $prefix: String, $after: String) {
  events(types: $types, streamPrefix: $prefix, after: $after) { id stream revision position type data metadata recordedAt hash } }`;

interface Fed {
  events: { id: string; stream: string; position: string; type: string; hash: string | null; metadata: { principal: string } };
}

const ev = (type: string, i: number): NewEvent => ({
  id: randomUUID(),
  type,
  data: { i },
  metadata: { principal: "loadgen", correlationId: `load-${i}`, causationId: `load-${i}`, at: new Date().toISOString() },
});

describe("the live audit feed", () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("resumes after a disconnect under load with no gap and no duplicate", async () => {
    const prefix = `load${randomUUID().slice(0, 8)}-`;
    const head = String((await t.service.store.headPosition()) ?? 0n);
    let writing = true;
    let written = 0;
    // Four writers append while the feed is read, dropped and resumed.
    const writers = Array.from({ length: 4 }, async (_, w) => {
      while (writing || written < 600) {
        await t.service.store.append(`${prefix}${w}`, [ev("Loaded", written++), ev("Loaded", written++)], "any");
        if (written > 3000) break;
      }
    });

    const client = t.ws("admin");
    const first = collect<Fed>(client, FEED, { prefix, after: head });
    await first.next(200);
    // The connection drops, as on a network failure, while writers go on.
    client.terminate();
    const seen = [...first.events];
    expect(written).toBeLessThan(3000);
    const last = seen.at(-1)!.events.position;

    const second = collect<Fed>(t.ws("admin"), FEED, { prefix, after: last });
    writing = false;
    await Promise.all(writers);
    const log = await t.service.store.readAll({ after: BigInt(head), filter: { streamPrefixes: [prefix] } });
    await second.next(log.length - seen.length);
    second.unsubscribe();

    const got = [...seen, ...second.events].map((e) => e.events);
    expect(got.map((e) => e.id)).toEqual(log.map((e) => e.id));
    expect(new Set(got.map((e) => e.position)).size).toBe(got.length);
    expect(got.map((e) => e.hash)).toEqual(log.map((e) => e.hash));
  });

  it("filters by type, starts at the head without `after`, and is for audit:read only", async () => {
    await t.service.store.append("feedtest-0", [ev("FeedA", 0), ev("FeedB", 0)], "any");
    // A feed's start is fixed once it subscribed to the store (at the head it read just before).
    const subscribe = vi.spyOn(t.service.store, "subscribeToAll");
    const typed = collect<Fed>(t.ws("admin"), FEED, { types: ["FeedB"] });
    const fromHead = collect<Fed>(t.ws("admin"), FEED, { prefix: "feedtest-" });
    const feeds = () => subscribe.mock.calls.filter(([o]) => o?.filter?.eventTypes?.includes("FeedB") || o?.filter?.streamPrefixes?.includes("feedtest-"));
    await vi.waitFor(() => expect(feeds(), "both feeds subscribed to the store").toHaveLength(2), { timeout: 15_000, interval: 10 });
    subscribe.mockRestore();
    await t.service.store.append("feedtest-1", [ev("FeedA", 1), ev("FeedB", 2), ev("FeedB", 3)], "any");
    const fed = (e: Fed) => `${e.events.stream} ${e.events.type}`;
    expect((await typed.next(2)).map(fed)).toEqual(["feedtest-1 FeedB", "feedtest-1 FeedB"]);
    expect((await fromHead.next(3)).map(fed)).toEqual(["feedtest-1 FeedA", "feedtest-1 FeedB", "feedtest-1 FeedB"]);
    typed.unsubscribe();
    fromHead.unsubscribe();

    const denied = collect<Fed>(t.ws("manager"), FEED, {});
    await expect(denied.next(1)).rejects.toThrow(/FORBIDDEN|audit:read/);
    const bad = collect<Fed>(t.ws("admin"), FEED, { after: "yesterday" });
    await expect(bad.next(1)).rejects.toThrow(/BAD_USER_INPUT|log position/);
  });
});

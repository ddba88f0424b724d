/**
 * The one contract every EventStore adapter passes (memory, lmdb, esdb).
 *
 * Tests never assume an empty log or particular position values: each test works in its own
 * namespace of stream names and event types and reads the global log after the head it saw at
 * the start, so the suite also runs against a shared EventStoreDB server.
 */
import { createHash, randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyLog } from "../../src/audit/verify.js";
import { eventHash, GENESIS } from "../../src/infra/eventstore/chain.js";
import {
  DuplicateEventIdError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
  type Subscription,
} from "../../src/infra/eventstore/port.js";

export interface ContractStore {
  store: EventStore;
  /** Closes the store and opens it again on the same data (durable adapters). */
  reopen?: () => Promise<EventStore>;
  cleanup: () => Promise<void>;
}

export interface ContractOptions {
  /**
   * Event ids are unique across the whole log and a retry must repeat the original append exactly
   * (memory, lmdb). EventStoreDB only deduplicates ids within a stream, so it opts out.
   */
  strictEventIds?: boolean;
  /** Every makeStore() gives an empty log (not a shared server). */
  startsEmpty?: boolean;
  /** makeStore() provides reopen(): the data outlives the store object. */
  durable?: boolean;
  /**
   * The store keeps a global hash chain with a checkpoint every this many positions (makeStore
   * sets it small); undefined for stores without one (EventStoreDB).
   */
  checkpointInterval?: number;
}

const meta = (extra: Record<string, unknown> = {}) => ({
  principal: "user:contract",
  correlationId: randomUUID(),
  causationId: randomUUID(),
  at: "2026-11-22T10:00:00.000Z",
  ...extra,
});

function ev(type: string, data: unknown = {}, id: string = randomUUID()): NewEvent {
  return { id, type, data, metadata: meta() };
}

async function expectConflict(
  p: Promise<unknown>,
  stream: string,
  expected: ExpectedRevision,
  actual: number | "no_stream",
): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WrongExpectedRevisionError);
  const w = err as WrongExpectedRevisionError;
  expect({ stream: w.stream, expected: w.expected, actual: w.actual, code: w.code }).toEqual({
    stream,
    expected,
    actual,
    code: "CONFLICT",
  });
  expect(w.message).toContain(String(expected));
  expect(w.message).toContain(String(actual));
}

/** Collects `n` events from a subscription, then closes it. */
async function take(sub: Subscription, n: number): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  if (n > 0) {
    for await (const e of sub) {
      out.push(e);
      if (out.length >= n) break;
    }
  }
  await sub.close();
  return out;
}

function expectStrictlyIncreasing(positions: readonly bigint[]): void {
  for (let i = 1; i < positions.length; i++) {
    if (!(positions[i]! > positions[i - 1]!)) {
      throw new Error(`positions not strictly increasing at ${i}: ${positions[i - 1]} then ${positions[i]}`);
    }
  }
}

export function eventStoreContract(
  name: string,
  makeStore: () => Promise<ContractStore>,
  options: ContractOptions = {},
): void {
  describe(`EventStore contract: ${name}`, () => {
    let ctx: ContractStore;
    let store: EventStore;
    /** A fresh namespace per test: stream names and event types start with it. */
    let ns: string;
    let head0: bigint | undefined;

    beforeEach(async () => {
      ctx = await makeStore();
      store = ctx.store;
      ns = `c${randomUUID().replaceAll("-", "").slice(0, 12)}`;
      head0 = await store.headPosition();
    });
    afterEach(async () => {
      await ctx.cleanup();
    });

    const s = (suffix: string) => `${ns}-${suffix}`;
    /** This test's slice of the global log. */
    const mine = (st: EventStore = store) => st.readAll({ after: head0, filter: { streamPrefixes: [`${ns}-`] } });

    describe("expected revision", () => {
      it("no_stream creates a new stream at revision 0", async () => {
        const r = await store.append(s("a"), [ev("A")], "no_stream");
        expect(r.revision).toBe(0);
        expect(typeof r.position).toBe("bigint");
        const [e] = await store.readStream(s("a"));
        expect(e!.position).toBe(r.position);
      });

      it("no_stream on an existing stream is a conflict naming the actual revision, and writes nothing", async () => {
        await store.append(s("a"), [ev("A"), ev("A")], "no_stream");
        await expectConflict(store.append(s("a"), [ev("B")], "no_stream"), s("a"), "no_stream", 1);
        expect((await store.readStream(s("a"))).map((e) => e.type)).toEqual(["A", "A"]);
      });

      it("stream_exists on a missing stream is a conflict with actual no_stream", async () => {
        await expectConflict(store.append(s("a"), [ev("A")], "stream_exists"), s("a"), "stream_exists", "no_stream");
        expect(await store.readStream(s("a"))).toEqual([]);
      });

      it("stream_exists on an existing stream appends", async () => {
        await store.append(s("a"), [ev("A")], "no_stream");
        const r = await store.append(s("a"), [ev("B")], "stream_exists");
        expect(r.revision).toBe(1);
      });

      it("any appends to a new and to an existing stream", async () => {
        expect((await store.append(s("a"), [ev("A")], "any")).revision).toBe(0);
        expect((await store.append(s("a"), [ev("B"), ev("C")], "any")).revision).toBe(2);
      });

      it("an exact revision appends when it matches the stream's revision", async () => {
        await store.append(s("a"), [ev("A"), ev("B")], "no_stream");
        const r = await store.append(s("a"), [ev("C")], 1);
        expect(r.revision).toBe(2);
        expect((await store.readStream(s("a"))).map((e) => e.revision)).toEqual([0, 1, 2]);
      });

      it("an exact revision that does not match is a conflict naming expected and actual", async () => {
        await store.append(s("a"), [ev("A"), ev("B")], "no_stream");
        await expectConflict(store.append(s("a"), [ev("C")], 0), s("a"), 0, 1);
        await expectConflict(store.append(s("a"), [ev("C")], 2), s("a"), 2, 1);
        await expectConflict(store.append(s("new"), [ev("C")], 0), s("new"), 0, "no_stream");
        expect(await store.readStream(s("a"))).toHaveLength(2);
        expect(await store.readStream(s("new"))).toEqual([]);
      });

      it("a multi-event append takes contiguous revisions and increasing positions, and reports the last", async () => {
        const r = await store.append(s("a"), [ev("A"), ev("B"), ev("C")], "no_stream");
        const events = await store.readStream(s("a"));
        expect(events.map((e) => [e.type, e.revision])).toEqual([
          ["A", 0],
          ["B", 1],
          ["C", 2],
        ]);
        expectStrictlyIncreasing(events.map((e) => e.position));
        expect(r).toEqual({ revision: 2, position: events[2]!.position });
      });

      it("an empty append checks the expected revision and writes nothing", async () => {
        expect((await store.append(s("a"), [], "no_stream")).revision).toBe(-1);
        expect((await store.append(s("a"), [], "any")).revision).toBe(-1);
        await expectConflict(store.append(s("a"), [], "stream_exists"), s("a"), "stream_exists", "no_stream");
        await expectConflict(store.append(s("a"), [], 0), s("a"), 0, "no_stream");
        expect(await store.readStream(s("a"))).toEqual([]);
        // The empty append did not create the stream.
        const first = await store.append(s("a"), [ev("A")], "no_stream");

        const r = await store.append(s("a"), [], 0);
        expect(r).toEqual({ revision: 0, position: first.position });
        expect((await store.append(s("a"), [], "stream_exists")).revision).toBe(0);
        expect((await store.append(s("a"), [], "any")).revision).toBe(0);
        await expectConflict(store.append(s("a"), [], "no_stream"), s("a"), "no_stream", 0);
        await expectConflict(store.append(s("a"), [], 3), s("a"), 3, 0);
        expect(await store.readStream(s("a"))).toHaveLength(1);
      });
    });

    describe("appendSequence", () => {
      it("appends every step in order, each stream at its own revision", async () => {
        await store.append(s("host"), [ev("H0")], "no_stream");
        const r = await store.appendSequence([
          { stream: s("host"), events: [ev("H1")], expectedRevision: 0 },
          { stream: s("arq"), events: [ev("A0"), ev("A1")], expectedRevision: "no_stream" },
        ]);
        expect(r.refusal).toBeUndefined();
        expect(r.appended.map((a) => a.revision)).toEqual([1, 1]);
        expect(r.appended[1]!.position > r.appended[0]!.position).toBe(true);
        expect((await mine()).map((e) => e.type)).toEqual(["H0", "H1", "A0", "A1"]);
      });

      it("stops at the first refused step: the steps before it stay, the later ones are not tried", async () => {
        await store.append(s("arq"), [ev("A0")], "no_stream");
        const r = await store.appendSequence([
          { stream: s("host"), events: [ev("H0")], expectedRevision: "no_stream" },
          { stream: s("arq"), events: [ev("A1")], expectedRevision: 5 },
          { stream: s("other"), events: [ev("O0")], expectedRevision: "any" },
        ]);
        expect(r.appended).toHaveLength(1);
        expect(r.refusal).toBeInstanceOf(WrongExpectedRevisionError);
        expect((r.refusal as WrongExpectedRevisionError).stream).toBe(s("arq"));
        expect((r.refusal as WrongExpectedRevisionError).actual).toBe(0);
        expect((await mine()).map((e) => e.type)).toEqual(["A0", "H0"]);
        expect(await store.readStream(s("other"))).toEqual([]);
      });

      it("a refused first step appends nothing", async () => {
        const r = await store.appendSequence([
          { stream: s("host"), events: [ev("H0")], expectedRevision: 3 },
          { stream: s("arq"), events: [ev("A0")], expectedRevision: "any" },
        ]);
        expect(r.appended).toEqual([]);
        expect(r.refusal).toBeInstanceOf(WrongExpectedRevisionError);
        expect(await mine()).toEqual([]);
      });

      it("subscribers see the sequence's events in order", async () => {
        const sub = store.subscribeToAll({ after: head0, filter: { streamPrefixes: [`${ns}-`] } });
        const got = take(sub, 3);
        await store.appendSequence([
          { stream: s("host"), events: [ev("H0")], expectedRevision: "no_stream" },
          { stream: s("arq"), events: [ev("A0"), ev("A1")], expectedRevision: "no_stream" },
        ]);
        const events = await got;
        expect(events.map((e) => e.type)).toEqual(["H0", "A0", "A1"]);
        expectStrictlyIncreasing(events.map((e) => e.position));
      });
    });

    describe("idempotent retry", () => {
      it("repeating an append with the same event ids returns the original result and writes nothing", async () => {
        const events = [ev("A"), ev("B")];
        const first = await store.append(s("a"), events, "no_stream");
        expect(await store.append(s("a"), events, "no_stream")).toEqual(first);
        expect(await store.append(s("a"), events, "any")).toEqual(first);
        expect((await store.readStream(s("a"))).map((e) => e.id)).toEqual(events.map((e) => e.id));
        expect(await mine()).toHaveLength(2);
      });

      it("a retry after the stream moved on still returns the original result", async () => {
        const events = [ev("A"), ev("B")];
        const first = await store.append(s("a"), events, "no_stream");
        await store.append(s("a"), [ev("C")], 1);
        expect(await store.append(s("a"), events, "no_stream")).toEqual(first);
        expect((await store.readStream(s("a"))).map((e) => e.type)).toEqual(["A", "B", "C"]);
      });

      it("concurrent identical appends write once", async () => {
        const events = [ev("A"), ev("B"), ev("C")];
        const results = await Promise.all([1, 2, 3].map(() => store.append(s("a"), events, "any")));
        expect(results[1]).toEqual(results[0]);
        expect(results[2]).toEqual(results[0]);
        expect(await store.readStream(s("a"))).toHaveLength(3);
      });

      if (options.strictEventIds) {
        it("an id reused in another stream is a DuplicateEventIdError, and nothing is written", async () => {
          const a = ev("A");
          await store.append(s("a"), [a], "no_stream");
          const err = await store.append(s("b"), [ev("X"), a], "any").catch((e: unknown) => e);
          expect(err).toBeInstanceOf(DuplicateEventIdError);
          expect((err as DuplicateEventIdError).eventId).toBe(a.id);
          expect((err as DuplicateEventIdError).code).toBe("CONFLICT");
          expect(await store.readStream(s("b"))).toEqual([]);
        });

        it("known ids mixed with new ones, or in another order, are a DuplicateEventIdError", async () => {
          const [a, b] = [ev("A"), ev("B")];
          await store.append(s("a"), [a, b], "no_stream");
          await expect(store.append(s("a"), [a, ev("C")], "any")).rejects.toBeInstanceOf(DuplicateEventIdError);
          await expect(store.append(s("a"), [b, a], "any")).rejects.toBeInstanceOf(DuplicateEventIdError);
          await expect(store.append(s("a"), [ev("D"), a], "any")).rejects.toBeInstanceOf(DuplicateEventIdError);
          expect(await store.readStream(s("a"))).toHaveLength(2);
        });

        it("one append naming the same id twice is a DuplicateEventIdError", async () => {
          const a = ev("A");
          await expect(store.append(s("a"), [a, a], "no_stream")).rejects.toBeInstanceOf(DuplicateEventIdError);
          expect(await store.readStream(s("a"))).toEqual([]);
        });
      }
    });

    describe("readStream", () => {
      const types = ["E0", "E1", "E2", "E3", "E4"];
      beforeEach(async () => {
        await store.append(s("r"), types.slice(0, 2).map((t) => ev(t)), "no_stream");
        await store.append(s("other"), [ev("X")], "no_stream");
        await store.append(s("r"), types.slice(2).map((t) => ev(t)), 1);
      });
      const read = async (o: Parameters<EventStore["readStream"]>[1]) => (await store.readStream(s("r"), o)).map((e) => e.type);

      it("reads forwards from the start, or from a revision (inclusive), up to maxCount", async () => {
        expect(await read(undefined)).toEqual(types);
        expect(await read({ fromRevision: 2 })).toEqual(["E2", "E3", "E4"]);
        expect(await read({ fromRevision: 1, maxCount: 2 })).toEqual(["E1", "E2"]);
        expect(await read({ maxCount: 1 })).toEqual(["E0"]);
        expect(await read({ fromRevision: 5 })).toEqual([]);
      });

      it("reads backwards from the end, or from a revision (inclusive), up to maxCount", async () => {
        expect(await read({ direction: "backwards" })).toEqual([...types].reverse());
        expect(await read({ direction: "backwards", maxCount: 1 })).toEqual(["E4"]);
        expect(await read({ direction: "backwards", fromRevision: 2 })).toEqual(["E2", "E1", "E0"]);
        expect(await read({ direction: "backwards", fromRevision: 3, maxCount: 2 })).toEqual(["E3", "E2"]);
      });

      it("agrees with slicing the whole stream for every start, count and direction (a long stream)", async () => {
        // Uneven batches, so appends start and end on both sides of any internal paging boundary.
        const batches = [1, 31, 1, 5, 32, 5];
        let revision: ExpectedRevision = "no_stream";
        for (const n of batches) {
          revision = (await store.append(s("long"), Array.from({ length: n }, () => ev("L")), revision)).revision;
        }
        const all = await store.readStream(s("long"));
        expect(all.map((e) => e.revision)).toEqual([...Array(75).keys()]);
        for (const direction of ["forwards", "backwards"] as const) {
          const ordered = direction === "forwards" ? all : [...all].reverse();
          for (const fromRevision of [undefined, 0, 1, 30, 31, 32, 33, 63, 64, 74, 75, 100]) {
            for (const maxCount of [undefined, 1, 2, 31, 32, 33, 100]) {
              const reached = (r: number) => fromRevision === undefined || (direction === "forwards" ? r >= fromRevision : r <= fromRevision);
              const start = ordered.findIndex((e) => reached(e.revision));
              const expected = start < 0 ? [] : ordered.slice(start, maxCount === undefined ? undefined : start + maxCount);
              const got = await store.readStream(s("long"), { direction, fromRevision, maxCount });
              const label = JSON.stringify({ direction, fromRevision, maxCount });
              expect(got.map((e) => e.revision), label).toEqual(expected.map((e) => e.revision));
            }
          }
        }
      });

      it("returns an empty array for a stream that does not exist", async () => {
        expect(await store.readStream(s("missing"))).toEqual([]);
        expect(await store.readStream(s("missing"), { direction: "backwards" })).toEqual([]);
      });

      it("keeps only the stream's events, with their stream, revision and position", async () => {
        const events = await store.readStream(s("r"));
        expect(events.every((e) => e.stream === s("r"))).toBe(true);
        expect(events.map((e) => e.revision)).toEqual([0, 1, 2, 3, 4]);
        expectStrictlyIncreasing(events.map((e) => e.position));
        // A prefix of the name is another stream.
        expect(await store.readStream(`${ns}-`)).toEqual([]);
      });
    });

    it("stores id, type, data, metadata and the record time faithfully", async () => {
      const data = {
        text: "Grüße, 加速器 🚀",
        int: 42,
        negative: -7,
        float: 3.25,
        big: 2 ** 40,
        flag: false,
        none: null,
        list: [1, "two", { three: [3] }],
        nested: { deeper: { deepest: "x".repeat(5000) } },
        empty: {},
        emptyList: [],
      };
      const e: NewEvent = { id: randomUUID(), type: "Faithful", data, metadata: meta({ traceId: "t-1", attempt: 2 }) };
      const before = Date.now();
      await store.append(s("f"), [e], "no_stream");
      const [got] = await store.readStream(s("f"));
      expect(got!.id).toBe(e.id);
      expect(got!.type).toBe("Faithful");
      expect(got!.data).toEqual(data);
      expect(got!.metadata).toEqual(e.metadata);
      expect(got!.recordedAt).toBeInstanceOf(Date);
      // Clocks of a remote server may differ a little; a minute of slack still catches a wrong unit.
      expect(Math.abs(got!.recordedAt.getTime() - before)).toBeLessThan(60_000);
      const [fromLog] = await mine();
      expect(fromLog).toEqual(got);
    });

    describe("readAll", () => {
      it("returns the log in position order, strictly after `after`, up to maxCount", async () => {
        await store.append(s("a"), [ev("A1"), ev("A2")], "no_stream");
        await store.append(s("b"), [ev("B1")], "no_stream");
        await store.append(s("a"), [ev("A3")], 1);
        const all = await mine();
        expect(all.map((e) => e.type)).toEqual(["A1", "A2", "B1", "A3"]);
        expectStrictlyIncreasing(all.map((e) => e.position));

        const filter = { streamPrefixes: [`${ns}-`] };
        const afterSecond = await store.readAll({ after: all[1]!.position, filter });
        expect(afterSecond.map((e) => e.type)).toEqual(["B1", "A3"]);
        const page = await store.readAll({ after: all[0]!.position, maxCount: 2, filter });
        expect(page.map((e) => e.type)).toEqual(["A2", "B1"]);
        expect(await store.readAll({ after: all[3]!.position, filter })).toEqual([]);
        expect(await store.headPosition()).toBe(all[3]!.position);
      });

      it("filters by event type and by stream prefix, maxCount counting matches", async () => {
        await store.append(s("dev-1"), [ev(`${ns}Added`), ev(`${ns}Removed`)], "no_stream");
        await store.append(s("arq-1"), [ev(`${ns}Added`)], "no_stream");
        await store.append(s("dev-2"), [ev(`${ns}Added`)], "no_stream");
        const byType = await store.readAll({ after: head0, filter: { eventTypes: [`${ns}Added`] } });
        expect(byType.map((e) => e.stream)).toEqual([s("dev-1"), s("arq-1"), s("dev-2")]);
        const byPrefix = await store.readAll({ after: head0, filter: { streamPrefixes: [s("dev-")] } });
        expect(byPrefix.map((e) => e.type)).toEqual([`${ns}Added`, `${ns}Removed`, `${ns}Added`]);
        const both = await store.readAll({
          after: head0,
          filter: { eventTypes: [`${ns}Removed`, `${ns}Added`], streamPrefixes: [s("arq-"), s("dev-2")] },
        });
        expect(both.map((e) => e.stream)).toEqual([s("arq-1"), s("dev-2")]);
        const firstTwo = await store.readAll({ after: head0, maxCount: 2, filter: { eventTypes: [`${ns}Added`] } });
        expect(firstTwo.map((e) => e.stream)).toEqual([s("dev-1"), s("arq-1")]);
      });
    });

    it("readStreamEnds: the last event of each stream under a prefix, a page at a time (or undefined: cannot tell)", async () => {
      await store.append(s("arq-b"), [ev("Created"), ev("Bound")], "no_stream");
      await store.append(s("arq-a"), [ev("Created")], "no_stream");
      await store.append(s("dev-1"), [ev("Added")], "no_stream");
      // A long stream: its last event is in a later chunk of revisions than its first.
      await store.append(s("arq-c"), Array.from({ length: 70 }, (_, i) => ev(`Step${i}`)), "no_stream");
      await store.append(s("arq-b"), [ev("Deleted")], 1);
      const first = await store.readStreamEnds({ prefix: s("arq-"), maxCount: 2 });
      if (first === undefined) {
        expect(store.kind).toBe("esdb");
        return;
      }
      const log = await mine();
      const lastOf = (stream: string) => log.filter((e) => e.stream === stream).at(-1)!;
      const end = (stream: string) => ({ stream, type: lastOf(stream).type, position: lastOf(stream).position });
      expect(first).toEqual([end(s("arq-a")), end(s("arq-b"))]);
      expect(first[1]).toMatchObject({ type: "Deleted" });
      expect(await store.readStreamEnds({ prefix: s("arq-"), after: first[1]!.stream, maxCount: 2 })).toEqual([end(s("arq-c"))]);
      expect((await store.readStreamEnds({ prefix: s("arq-c"), maxCount: 10 }))![0]).toMatchObject({ type: "Step69" });
      expect(await store.readStreamEnds({ prefix: s("arq-"), after: s("arq-c"), maxCount: 2 })).toEqual([]);
      expect(await store.readStreamEnds({ prefix: s("arq-"), maxCount: 0 })).toEqual([]);
      expect(await store.readStreamEnds({ prefix: s("none-"), maxCount: 10 })).toEqual([]);
    });

    if (options.startsEmpty) {
      it("headPosition is undefined for an empty log, then the last event's position", async () => {
        expect(head0).toBeUndefined();
        expect(await store.readAll()).toEqual([]);
        const r = await store.append(s("a"), [ev("A"), ev("B")], "no_stream");
        expect(await store.headPosition()).toBe(r.position);
      });
    }

    describe("concurrent writers", () => {
      it("keep the global log strictly ordered and every stream contiguous (20 writers x 50 appends)", async () => {
        const writers = 20;
        const perWriter = 50;
        const results = new Map<string, AppendResult>();
        const ids = new Map<string, string[]>();
        await Promise.all(
          Array.from({ length: writers }, async (_, w) => {
            let previous = -1n;
            let ownRevision: number | undefined;
            for (let i = 0; i < perWriter; i++) {
              // Half the appends go to the writer's own stream with an exact revision, half to
              // one of four shared streams with "any"; appends carry 1 to 3 events.
              const own = i % 2 === 0;
              const stream = own ? s(`own-${w}`) : s(`shared-${w % 4}`);
              const expected: ExpectedRevision = own ? (ownRevision ?? "no_stream") : "any";
              const events = Array.from({ length: (i % 3) + 1 }, (_, k) => ev("W", { w, i, k }));
              const key = `${w}/${i}`;
              const r = await store.append(stream, events, expected);
              if (own) ownRevision = r.revision;
              results.set(key, r);
              ids.set(key, events.map((e) => e.id));
              // One writer's appends are sequential, so their positions increase.
              expect(r.position).toBeGreaterThan(previous);
              previous = r.position;
            }
          }),
        );

        const log = await mine();
        const expectedCount = [...ids.values()].reduce((n, l) => n + l.length, 0);
        expect(log).toHaveLength(expectedCount);
        expectStrictlyIncreasing(log.map((e) => e.position));
        expect(new Set(log.map((e) => e.id)).size).toBe(expectedCount);

        // Each stream, read from the global log, has revisions 0..n-1 in position order and
        // equals readStream.
        const byStream = new Map<string, RecordedEvent[]>();
        for (const e of log) byStream.set(e.stream, [...(byStream.get(e.stream) ?? []), e]);
        for (const [stream, events] of byStream) {
          expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => i));
          expect(await store.readStream(stream)).toEqual(events);
        }

        // Each append's events are contiguous in its stream and end at the reported revision/position.
        const byId = new Map(log.map((e) => [e.id, e]));
        for (const [key, r] of results) {
          const got = ids.get(key)!.map((id) => byId.get(id)!);
          expect(got.at(-1)!.position).toBe(r.position);
          expect(got.map((e) => e.revision)).toEqual(got.map((_, k) => r.revision - got.length + 1 + k));
        }
      });

      it("optimistic concurrency loses no update: 10 writers read-decide-append on one stream", async () => {
        await store.append(s("counter"), [ev("Counted", { n: 0 })], "no_stream");
        const writers = 10;
        const incrementsEach = 8;
        let conflicts = 0;
        await Promise.all(
          Array.from({ length: writers }, async () => {
            for (let done = 0; done < incrementsEach; ) {
              const [last] = await store.readStream(s("counter"), { direction: "backwards", maxCount: 1 });
              const n = (last!.data as { n: number }).n;
              try {
                await store.append(s("counter"), [ev("Counted", { n: n + 1 })], last!.revision);
                done++;
              } catch (e) {
                if (!(e instanceof WrongExpectedRevisionError)) throw e;
                conflicts++;
              }
            }
          }),
        );
        const events = await store.readStream(s("counter"));
        expect(events.map((e) => (e.data as { n: number }).n)).toEqual(events.map((_, i) => i));
        expect(events).toHaveLength(writers * incrementsEach + 1);
        // Ten writers racing on one stream must have collided at least once, or the check did nothing.
        expect(conflicts).toBeGreaterThan(0);
      });
    });

    describe("subscribeToAll", () => {
      it("catches up while writers append, then goes live: every event once, in order, no gap", async () => {
        const filter = { streamPrefixes: [`${ns}-`] };
        const writers = 5;
        const perWriter = 40;
        const total = writers * perWriter * 2;
        await store.append(s("before"), [ev("Early"), ev("Early")], "no_stream");

        let started!: () => void;
        const halfway = new Promise<void>((r) => (started = r));
        let appended = 0;
        const writing = Promise.all(
          Array.from({ length: writers }, async (_, w) => {
            for (let i = 0; i < perWriter; i++) {
              await store.append(s(`live-${w % 3}`), [ev("Live", { w, i }), ev("Live", { w, i })], "any");
              if (++appended === (writers * perWriter) / 2) started();
            }
          }),
        );
        // Subscribe mid-storm: part of the log is history, part arrives live while catching up.
        await halfway;
        const delivered = take(store.subscribeToAll({ after: head0, filter }), total + 2);
        // The writers were still going when the subscription started, so it raced with them.
        expect(appended).toBeLessThan(writers * perWriter);
        await writing;
        const got = await delivered;

        const log = await mine();
        expect(log).toHaveLength(total + 2);
        expect(got.map((e) => e.id)).toEqual(log.map((e) => e.id));
        expectStrictlyIncreasing(got.map((e) => e.position));
      });

      it("starts strictly after `after` and delivers later appends live", async () => {
        await store.append(s("a"), [ev("A1"), ev("A2"), ev("A3")], "no_stream");
        const [, second] = await mine();
        const sub = store.subscribeToAll({ after: second!.position, filter: { streamPrefixes: [`${ns}-`] } });
        const got = take(sub, 3);
        await store.append(s("b"), [ev("B1")], "no_stream");
        await store.append(s("a"), [ev("A4")], 2);
        expect((await got).map((e) => e.type)).toEqual(["A3", "B1", "A4"]);
      });

      it("a live subscriber gets each event exactly as the log holds it", async () => {
        const sub = store.subscribeToAll({ after: await store.headPosition(), filter: { streamPrefixes: [`${ns}-`] } });
        const got = take(sub, 5);
        // Let the subscription catch up and wait, so what follows is delivered live.
        await new Promise((r) => setTimeout(r, 20));
        const data = { text: "Grüße 🚀", n: -7.5, none: null, list: [1, { two: [2] }], empty: {} };
        await store.appendSequence([
          { stream: s("x"), events: [ev("X1", data), ev("X2", { other: true })], expectedRevision: "no_stream" },
          { stream: s("y"), events: [ev("Y1", data)], expectedRevision: "no_stream" },
        ]);
        await Promise.all([store.append(s("x"), [ev("X3")], "any"), store.append(s("z"), [ev("Z1", { deep: { er: "x".repeat(3000) } })], "no_stream")]);
        expect(await got).toEqual(await mine());
      });

      it("applies event type and stream prefix filters, live and in catch-up", async () => {
        await store.append(s("dev-1"), [ev(`${ns}Added`), ev(`${ns}Other`)], "no_stream");
        const byType = take(store.subscribeToAll({ after: head0, filter: { eventTypes: [`${ns}Added`] } }), 3);
        const byPrefix = take(store.subscribeToAll({ after: head0, filter: { streamPrefixes: [s("arq-")] } }), 2);
        await store.append(s("arq-1"), [ev(`${ns}Other`), ev(`${ns}Added`)], "no_stream");
        await store.append(s("dev-2"), [ev(`${ns}Added`)], "no_stream");
        await store.append(s("arq-2"), [ev(`${ns}Other`)], "no_stream");
        expect((await byType).map((e) => e.stream)).toEqual([s("dev-1"), s("arq-1"), s("dev-2")]);
        expect((await byPrefix).map((e) => [e.stream, e.type])).toEqual([
          [s("arq-1"), `${ns}Other`],
          [s("arq-1"), `${ns}Added`],
        ]);
      });

      it("close() ends an iteration that is waiting for live events", async () => {
        await store.append(s("a"), [ev("A")], "no_stream");
        const sub = store.subscribeToAll({ after: head0, filter: { streamPrefixes: [`${ns}-`] } });
        const seen: string[] = [];
        let firstSeen!: () => void;
        const gotFirst = new Promise<void>((r) => (firstSeen = r));
        const loop = (async () => {
          for await (const e of sub) {
            seen.push(e.type);
            firstSeen();
          }
          return "ended";
        })();
        await gotFirst;
        // The loop is now parked waiting for the next append; close must release it.
        await sub.close();
        expect(await loop).toBe("ended");
        await store.append(s("a"), [ev("B")], 0);
        expect(seen).toEqual(["A"]);
      });

      it("close() before the first event ends the iteration, and a closed subscription yields nothing", async () => {
        const sub = store.subscribeToAll({ after: await store.headPosition(), filter: { streamPrefixes: [`${ns}-`] } });
        const loop = (async () => {
          const seen: RecordedEvent[] = [];
          for await (const e of sub) seen.push(e);
          return seen;
        })();
        await sub.close();
        await store.append(s("a"), [ev("A")], "no_stream");
        expect(await loop).toEqual([]);
      });
    });

    describe("hash chain", () => {
      /** Checks every event of the stream against the hash of its content and its link. */
      async function expectChained(stream: string): Promise<RecordedEvent[]> {
        const events = await store.readStream(stream);
        let previous = GENESIS;
        for (const e of events) {
          expect(e.hash, `${stream}@${e.revision}`).toBe(eventHash(previous, e));
          previous = e.hash!;
        }
        return events;
      }

      it("every appended event carries a hash chained to the previous event of its stream", async () => {
        await store.append(s("a"), [ev("A0"), ev("A1", { n: 1 }), ev("A2")], "no_stream");
        await store.append(s("b"), [ev("B0")], "no_stream");
        await store.appendSequence([
          { stream: s("a"), events: [ev("A3")], expectedRevision: 2 },
          { stream: s("b"), events: [ev("B1"), ev("B2")], expectedRevision: 0 },
          { stream: s("c"), events: [ev("C0")], expectedRevision: "any" },
        ]);
        await store.append(s("a"), [ev("A4")], "any");
        await store.append(s("b"), [ev("B3")], "stream_exists");
        const a = await expectChained(s("a"));
        expect(a).toHaveLength(5);
        expect(new Set(a.map((e) => e.hash)).size).toBe(5);
        await expectChained(s("b"));
        await expectChained(s("c"));
        // The global log and the stream agree on every hash.
        const log = await mine();
        expect(log.filter((e) => e.stream === s("a"))).toEqual(a);
      });

      it("the hash covers the content: the same event in another stream or at another revision hashes differently", async () => {
        const id = randomUUID();
        await store.append(s("x"), [ev("Same", { v: 1 }, id)], "no_stream");
        const [x] = await store.readStream(s("x"));
        expect(x!.hash).toMatch(/^[0-9a-f]{64}$/);
        expect(eventHash(GENESIS, { ...x!, data: { v: 2 } })).not.toBe(x!.hash);
        expect(eventHash(GENESIS, { ...x!, stream: s("y") })).not.toBe(x!.hash);
        expect(eventHash(GENESIS, { ...x!, revision: 1 })).not.toBe(x!.hash);
        expect(eventHash(GENESIS, { ...x!, metadata: { ...x!.metadata, principal: "someone else" } })).not.toBe(x!.hash);
      });

      it("an idempotent retry keeps the original hashes", async () => {
        const events = [ev("A"), ev("B")];
        await store.append(s("a"), events, "no_stream");
        const before = await store.readStream(s("a"));
        await store.append(s("a"), [ev("C")], 1);
        await store.append(s("a"), events, "no_stream");
        expect((await store.readStream(s("a"))).slice(0, 2)).toEqual(before);
        await expectChained(s("a"));
      });

      it("audit verify finds no break in a log the store wrote", async () => {
        await Promise.all(
          Array.from({ length: 5 }, async (_, w) => {
            for (let i = 0; i < 6; i++) await store.append(s(`v-${w % 2}`), [ev("V", { w, i }), ev("V", { w, i })], "any");
          }),
        );
        const report = await verifyLog(store, { after: head0, pageSize: 7 });
        expect(report.firstBreaks).toEqual([]);
        expect(report.ok).toBe(true);
        expect(report.events).toBeGreaterThanOrEqual(60);
        expect(report.hashed).toBe(report.events);
      });

      it("finds the right position for a time, by the store's clock", async () => {
        const a = await store.append(s("t"), [ev("T1")], "no_stream");
        await new Promise((r) => setTimeout(r, 15));
        const between = new Date();
        await new Promise((r) => setTimeout(r, 15));
        const b = await store.append(s("t"), [ev("T2")], 0);
        const [e1, e2] = await store.readStream(s("t"));
        expect(await store.positionAt(between)).toBe(a.position);
        expect(await store.positionAt(e2!.recordedAt)).toBe(b.position);
        expect(await store.positionAt(new Date(e1!.recordedAt.getTime() - 1))).not.toBe(a.position);
        if (options.startsEmpty) expect(await store.positionAt(new Date(e1!.recordedAt.getTime() - 1))).toBeUndefined();
      });

      if (options.checkpointInterval !== undefined && options.startsEmpty) {
        const interval = options.checkpointInterval;
        it("keeps the global chain's value at its start, every interval and at its head (version 2: one SHA-256 over each segment)", async () => {
          for (let i = 0; i < 5; i++) await store.append(s(`g-${i % 2}`), Array.from({ length: i + 2 }, () => ev("G")), "any");
          const log = await store.readAll();
          const checkpoints = await store.readCheckpoints();
          expect(checkpoints[0]).toEqual({ position: 0n, hash: GENESIS, version: 2 });
          // chain.ts: global_p = SHA-256(global_c + `:${q}:${hash_q}` for q in c+1..p), c the segment's checkpoint.
          const expected: Array<{ position: bigint; hash: string; version: 2; head?: true }> = [];
          let text = GENESIS;
          let chain = GENESIS;
          for (const e of log) {
            text += `:${e.position}:${e.hash!}`;
            chain = createHash("sha256").update(text).digest("hex");
            if (e.position % BigInt(interval) === 0n) {
              expected.push({ position: e.position, hash: chain, version: 2 });
              text = chain;
            } else if (e === log.at(-1)) expected.push({ position: e.position, hash: chain, version: 2, head: true });
          }
          expect(checkpoints.slice(1)).toEqual(expected);
          expect(await store.readCheckpoints({ after: BigInt(interval), maxCount: 1 })).toEqual([expected[1]]);
          const report = await verifyLog(store);
          expect(report.checkpoints).toBe(checkpoints.length - 1);
          expect(report.chain).toEqual({ position: log.at(-1)!.position.toString(), hash: chain });
        });
      }
    });

    if (options.durable) {
      it("reopening the store keeps every event, stream revision, position and id", async () => {
        const a = [ev("A"), ev("B")];
        const ra = await store.append(s("a"), a, "no_stream");
        const rb = await store.append(s("b"), [ev("C", { big: 2 ** 52 + 1 })], "no_stream");
        const before = await mine();
        store = await ctx.reopen!();
        expect(await mine(store)).toEqual(before);
        expect(await store.headPosition()).toBe(rb.position);
        // Retries are still recognised, revisions and positions continue after the reopen.
        expect(await store.append(s("a"), a, "no_stream")).toEqual(ra);
        const rc = await store.append(s("a"), [ev("D")], 1);
        expect(rc.revision).toBe(2);
        expect(rc.position).toBeGreaterThan(rb.position);
        const live = take(store.subscribeToAll({ after: rb.position }), 1);
        expect((await live).map((e) => e.type)).toEqual(["D"]);
        // The chains go on across the reopen.
        expect((await verifyLog(store, { after: head0 })).ok).toBe(true);
        const [, , d] = await store.readStream(s("a"));
        expect(d!.hash).toBe(eventHash(before[1]!.hash!, d!));
      });
    }
  });
}

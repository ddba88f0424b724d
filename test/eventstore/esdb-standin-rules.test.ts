/**
 * The stand-in of EventStoreDB itself, through the client's interface: each documented rule its
 * header cites, so that what the adapter is tested against is what the server does.
 */
import { randomUUID } from "node:crypto";
import { BACKWARDS, END, jsonEvent, StreamDeletedError, StreamNotFoundError, UnavailableError, WrongExpectedVersionError, type AllStreamResolvedEvent, type AppendExpectedRevision } from "@eventstore/db-client";
import { describe, expect, it } from "vitest";
import type { EsdbClient } from "../../src/infra/eventstore/esdb-client.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";

const event = (id: string = randomUUID(), type = "Happened") => jsonEvent({ id, type, data: { n: 1 } });
async function all<T>(read: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of read) out.push(x);
  return out;
}
const types = async (c: EsdbClient, stream: string) => (await all(c.readStream(stream))).map((r) => r.event!.type);
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as WrongExpectedVersionError);

describe("EventStoreDB stand-in: expected revisions", () => {
  it("a number must be the last event's revision, no_stream a missing stream, stream_exists an existing one; any always appends", async () => {
    const c = new EsdbStandIn().connect();
    expect(await refusal(c.appendToStream("s", [event()], { expectedRevision: "stream_exists" }))).toMatchObject({ actualVersion: "no_stream", expectedVersion: "stream_exists" });
    expect((await c.appendToStream("s", [event(), event()], { expectedRevision: "no_stream" })).nextExpectedRevision).toBe(1n);
    expect(await refusal(c.appendToStream("s", [event()], { expectedRevision: "no_stream" }))).toMatchObject({ actualVersion: 1n });
    expect(await refusal(c.appendToStream("s", [event()], { expectedRevision: 5n }))).toBeInstanceOf(WrongExpectedVersionError);
    expect((await c.appendToStream("s", [event()], { expectedRevision: 1n })).nextExpectedRevision).toBe(2n);
    expect((await c.appendToStream("s", [event()], { expectedRevision: "stream_exists" })).nextExpectedRevision).toBe(3n);
    expect((await c.appendToStream("s", [event()], { expectedRevision: "any" })).nextExpectedRevision).toBe(4n);
  });

  it("with throwOnAppendFailure=false a refusal is a result: success false and the current revision", async () => {
    const c = new EsdbStandIn().connect({ throwOnAppendFailure: false });
    await c.appendToStream("s", [event()], { expectedRevision: "no_stream" });
    expect(await c.appendToStream("s", [event()], { expectedRevision: 3n })).toEqual({ success: false, nextExpectedRevision: 0n, position: undefined });
    expect(await c.appendToStream("t", [event()], { expectedRevision: 3n })).toMatchObject({ success: false, nextExpectedRevision: -1n });
  });
});

describe("EventStoreDB stand-in: idempotence by event id", () => {
  it("behind the stream: the same ids succeed without writing, other or partly the same ids are refused", async () => {
    const c = new EsdbStandIn().connect();
    const [a, b] = [event(), event()];
    await c.appendToStream("s", [a, b], { expectedRevision: "no_stream" });
    await c.appendToStream("s", [event()], { expectedRevision: 1n });
    const again = await c.appendToStream("s", [a, b], { expectedRevision: "no_stream" });
    expect(again).toEqual({ success: true, nextExpectedRevision: 1n });
    expect(await refusal(c.appendToStream("s", [a, event()], { expectedRevision: "no_stream" }))).toBeInstanceOf(WrongExpectedVersionError);
    expect(await refusal(c.appendToStream("s", [event()], { expectedRevision: 0n }))).toBeInstanceOf(WrongExpectedVersionError);
    expect(await types(c, "s")).toHaveLength(3);
  });

  it("at the stream's revision the ids are not checked; with any the first id decides; another stream may reuse an id", async () => {
    const c = new EsdbStandIn().connect();
    const a = event();
    await c.appendToStream("s", [a], { expectedRevision: "no_stream" });
    await c.appendToStream("s", [a], { expectedRevision: 0n });
    expect(await types(c, "s")).toHaveLength(2);
    const [x, y] = [event(), event()];
    await c.appendToStream("t", [x, y], { expectedRevision: "any" });
    expect(await c.appendToStream("t", [x, y], { expectedRevision: "any" })).toEqual({ success: true, nextExpectedRevision: 1n });
    expect(await refusal(c.appendToStream("t", [x, event()], { expectedRevision: "any" }))).toBeInstanceOf(WrongExpectedVersionError);
    expect((await c.appendToStream("u", [x], { expectedRevision: "any" })).nextExpectedRevision).toBe(0n);
  });
});

describe("EventStoreDB stand-in: positions, $all, filters", () => {
  it("positions are byte offsets: after the server's own records, growing, never consecutive; commit equals prepare", async () => {
    const server = new EsdbStandIn();
    const c = server.connect();
    const r = await c.appendToStream("s", [event(), event()], { expectedRevision: "no_stream" });
    const read = await all(c.readAll());
    const mine = read.filter((x) => x.event!.streamId === "s").map((x) => x.event!.position);
    expect(read[0]!.event!.streamId.startsWith("$")).toBe(true);
    expect(mine[0]!.commit > 0n && mine[1]!.commit > mine[0]!.commit + 1n).toBe(true);
    expect(mine.every((p) => p.commit === p.prepare)).toBe(true);
    expect(r.position).toEqual(mine[1]);
  });

  it("reads $all forwards from a position including it, backwards excluding it, and refuses a position inside a record", async () => {
    const c = new EsdbStandIn().connect();
    await c.appendToStream("s", [event(randomUUID(), "A"), event(randomUUID(), "B"), event(randomUUID(), "C")], { expectedRevision: "no_stream" });
    const events = (await all(c.readAll())).filter((x) => x.event!.streamId === "s").map((x) => x.event!);
    const at = events[1]!.position;
    expect((await all(c.readAll({ fromPosition: at }))).map((x) => x.event!.type)).toEqual(["B", "C"]);
    expect((await all(c.readAll({ fromPosition: at, direction: BACKWARDS, maxCount: 1 }))).map((x) => x.event!.type)).toEqual(["A"]);
    expect((await all(c.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 }))).map((x) => x.event!.type)).toEqual(["C"]);
    await expect(all(c.readAll({ fromPosition: { commit: at.commit + 1n, prepare: at.commit + 1n } }))).rejects.toThrow(/Invalid position/);
  });

  it("filters on the server by stream name or type, prefix or regex; maxCount counts what passes", async () => {
    const server = new EsdbStandIn();
    const c = server.connect();
    await c.appendToStream("arq-1", [event(randomUUID(), "ArqCreated"), event(randomUUID(), "ArqBound")], { expectedRevision: "no_stream" });
    await c.appendToStream("host-1", [event(randomUUID(), "HostReported")], { expectedRevision: "no_stream" });
    const got = async (o: Parameters<EsdbClient["readAll"]>[0]) => (await all(c.readAll(o))).map((x: AllStreamResolvedEvent) => x.event!.type);
    expect(await got({ filter: { filterOn: "streamName", prefixes: ["host-"], checkpointInterval: 1 } })).toEqual(["HostReported"]);
    expect(await got({ filter: { filterOn: "eventType", regex: "Bound|Reported", checkpointInterval: 1 } })).toEqual(["ArqBound", "HostReported"]);
    expect(await got({ filter: { filterOn: "eventType", regex: "^[^$]", checkpointInterval: 1 }, maxCount: 2 })).toEqual(["ArqCreated", "ArqBound"]);
  });
});

describe("EventStoreDB stand-in: tombstones and subscriptions", () => {
  it("a tombstoned stream is gone for reads and appends; its $streamDeleted event is in $all; a stream never written is not found", async () => {
    const server = new EsdbStandIn();
    const c = server.connect();
    await c.appendToStream("s", [event()], { expectedRevision: "no_stream" });
    server.tombstoneStream("s");
    await expect(all(c.readStream("s"))).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(c.appendToStream("s", [event()], { expectedRevision: "any" as AppendExpectedRevision })).rejects.toBeInstanceOf(StreamDeletedError);
    expect((await all(c.readAll())).at(-1)!.event).toMatchObject({ streamId: "s", type: "$streamDeleted" });
    await expect(all(c.readStream("never"))).rejects.toBeInstanceOf(StreamNotFoundError);
  });

  it("a subscription catches up strictly after its position, goes live, and ends with the error a dropped connection gives", async () => {
    const server = new EsdbStandIn();
    const c = server.connect();
    const r = await c.appendToStream("s", [event(randomUUID(), "A")], { expectedRevision: "no_stream" });
    await c.appendToStream("s", [event(randomUUID(), "B")], { expectedRevision: 0n });
    const sub = c.subscribeToAll({ fromPosition: r.position! })[Symbol.asyncIterator]();
    expect((await sub.next()).value.event.type).toBe("B");
    const live = sub.next();
    await c.appendToStream("s", [event(randomUUID(), "C")], { expectedRevision: 1n });
    expect((await live).value.event.type).toBe("C");
    const dropped = sub.next();
    expect(server.dropSubscriptions()).toBe(1);
    await expect(dropped).rejects.toBeInstanceOf(UnavailableError);
  });
});

/**
 * The EventStoreDB adapter on the stand-in of the server: what the shared contract cannot show
 * (several processes on one server, lost answers, a client that reports refusals as results,
 * system events, namespaces, positions from callers, dropped subscriptions).
 */
import { randomUUID } from "node:crypto";
import { UnavailableError } from "@eventstore/db-client";
import { afterEach, describe, expect, it } from "vitest";
import { verifyLog } from "../../src/audit/verify.js";
import { DomainError } from "../../src/domain/shared/types.js";
import { eventHash, GENESIS } from "../../src/infra/eventstore/chain.js";
import { connectClient } from "../../src/infra/eventstore/esdb-client.js";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { WrongExpectedRevisionError, type EventStore, type ExpectedRevision, type NewEvent } from "../../src/infra/eventstore/port.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";

const ev = (type: string, data: unknown = {}, id: string = randomUUID()): NewEvent => ({
  id,
  type,
  data,
  metadata: { principal: "user:test", correlationId: randomUUID(), causationId: randomUUID(), at: "2026-11-28T01:00:00.000Z" },
});

const opened: EventStore[] = [];
function storeOn(server: EsdbStandIn, namespace?: string, throwOnAppendFailure?: boolean): EsdbEventStore {
  const store = new EsdbEventStore(server.connect({ throwOnAppendFailure }), { namespace });
  opened.push(store);
  return store;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function expectChained(store: EventStore, stream: string): Promise<void> {
  let previous = GENESIS;
  for (const e of await store.readStream(stream)) {
    expect(e.hash, `${stream}@${e.revision}`).toBe(eventHash(previous, e));
    previous = e.hash!;
  }
}

describe("esdb adapter: several processes on one server", () => {
  for (const expected of ["any", "stream_exists"] as const) {
    it(`"${expected}" appends from 4 processes at once are all accepted, as EventStoreDB accepts them, and stay chained`, async () => {
      const server = new EsdbStandIn();
      const stores = [1, 2, 3, 4].map(() => storeOn(server));
      await stores[0]!.append("shared", [ev("Start")], "no_stream");
      const results = await Promise.allSettled(stores.flatMap((s) => [1, 2, 3, 4].map(() => s.append("shared", [ev("Went")], expected))));
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);
      const events = await stores[0]!.readStream("shared");
      expect(events).toHaveLength(17);
      await expectChained(stores[0]!, "shared");
    });
  }

  it("an exact revision behind the stream is still refused when another process wrote first", async () => {
    const server = new EsdbStandIn();
    const [a, b] = [storeOn(server), storeOn(server)];
    await a.append("s", [ev("A")], "no_stream");
    await b.append("s", [ev("B")], 0);
    await expect(a.append("s", [ev("C")], 0)).rejects.toMatchObject({ name: "WrongExpectedRevisionError", actual: 1 });
  });
});

describe("esdb adapter: answers the server gives", () => {
  it("a retry after a lost answer, with other content under the same id, keeps the stored hash: the chain goes on unbroken", async () => {
    const server = new EsdbStandIn();
    const store = storeOn(server);
    await store.append("s", [ev("A")], "no_stream");
    const id = randomUUID();
    server.loseNextAnswer();
    await expect(store.append("s", [ev("B", { try: 1 }, id)], 0)).rejects.toBeInstanceOf(UnavailableError);
    // The caller tries again with the same id but rebuilt content: the server takes it as the same append.
    const retried = await store.append("s", [ev("B", { try: 2 }, id)], 0);
    const stored = await store.readStream("s");
    expect(stored.map((e) => e.data)).toEqual([{}, { try: 1 }]);
    expect(retried).toEqual({ revision: 1, position: stored[1]!.position });
    await store.append("s", [ev("C")], 1);
    await expectChained(store, "s");
    expect((await verifyLog(store)).ok).toBe(true);
  });

  it("a client that reports refusals as results (throwOnAppendFailure=false): a refusal is never taken as a success", async () => {
    const server = new EsdbStandIn();
    const store = storeOn(server, undefined, false);
    await store.append("s", [ev("A"), ev("B")], "no_stream");
    const err = await store.append("s", [ev("C")], 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedRevisionError);
    expect(err).toMatchObject({ expected: 0, actual: 1 });
    await expect(store.append("t", [ev("C")], 3)).rejects.toMatchObject({ actual: "no_stream" });
    expect((await store.readStream("s")).map((e) => e.type)).toEqual(["A", "B"]);
    // "any" decides again rather than failing.
    expect((await store.append("s", [ev("D")], "any")).revision).toBe(2);
  });

  it("refuses a connection string that asks for refusals as results", () => {
    expect(() => connectClient("esdb://localhost:2113?tls=false&throwOnAppendFailure=false")).toThrow(/throwOnAppendFailure/);
    expect(() => connectClient("esdb://localhost:2113?throwOnAppendFailure=FALSE")).toThrow(/throwOnAppendFailure/);
  });

  it("headPosition finds the newest application event past any number of system events", async () => {
    const server = new EsdbStandIn();
    const store = storeOn(server);
    const r = await store.append("s", [ev("A")], "no_stream");
    for (let i = 0; i < 10_050; i++) server.writeSystemEvent("$stats-127.0.0.1:2113", "$statsCollected", { i });
    server.tombstoneStream("gone");
    expect(await store.headPosition()).toBe(r.position);
  });

  it("a read of $all filtered by type is filtered by the server: only the matching events are sent", async () => {
    const server = new EsdbStandIn();
    const store = storeOn(server);
    for (let i = 0; i < 20; i++) await store.append(`s-${i}`, [ev("Noise"), ev("Noise"), ev("Noise"), ev("Noise")], "no_stream");
    await store.append("wanted", [ev("Wanted")], "no_stream");
    const before = server.sentByReadAll;
    const got = await store.readAll({ filter: { eventTypes: ["Wanted"] } });
    expect(got.map((e) => e.stream)).toEqual(["wanted"]);
    expect(server.sentByReadAll - before).toBeLessThanOrEqual(2);
  });

  it("system events, tombstones and deleted streams are never the application's", async () => {
    const server = new EsdbStandIn();
    const store = storeOn(server);
    await store.append("kept", [ev("A")], "no_stream");
    await store.append("gone", [ev("B")], "no_stream");
    server.writeSystemEvent("$$kept", "$metadata", { $maxAge: 10 });
    server.tombstoneStream("gone");
    expect((await store.readAll()).map((e) => [e.stream, e.type])).toEqual([
      ["kept", "A"],
      ["gone", "B"],
    ]);
    expect(await store.readStream("gone")).toEqual([]);
    await expect(store.append("$kept", [ev("X")], "any")).rejects.toThrow(TypeError);
  });
});

describe("esdb adapter: positions from callers", () => {
  const badInput = (e: unknown) => e instanceof DomainError && e.code === "BAD_USER_INPUT" && e.field === "after";

  it("a position that is not an event's is BAD_USER_INPUT on reads and subscriptions, before the server is asked to read from it", async () => {
    const server = new EsdbStandIn();
    const store = storeOn(server);
    const r = await store.append("s", [ev("A"), ev("B")], "no_stream");
    for (const after of [r.position + 1n, r.position - 1n, 2n ** 64n, 99_999_999_999_999_999_999n]) {
      expect(badInput(await store.readAll({ after }).catch((e: unknown) => e)), String(after)).toBe(true);
      const sub = store.subscribeToAll({ after });
      expect(badInput(await sub[Symbol.asyncIterator]().next().catch((e: unknown) => e))).toBe(true);
      await sub.close();
    }
    // Positions this service gave out, and the start, are fine (also from another process).
    const other = storeOn(server);
    const [first] = await store.readStream("s");
    expect((await other.readAll({ after: first!.position })).map((e) => e.type)).toEqual(["B"]);
    expect((await other.readAll({ after: 0n })).map((e) => e.type)).toEqual(["A", "B"]);
  });

  it("a transport error while checking a position stays a transport error", async () => {
    const server = new EsdbStandIn();
    const store = storeOn(server);
    const r = await store.append("s", [ev("A")], "no_stream");
    const other = storeOn(server);
    server.failNextCall(new UnavailableError(undefined, "down"));
    await expect(other.readAll({ after: r.position })).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe("esdb adapter: namespaces on one server", () => {
  it("each namespace reads, follows and finds the head of its own streams only, under the application's names", async () => {
    const server = new EsdbStandIn();
    const a = storeOn(server, "cyborg-a");
    const b = storeOn(server, "cyborg-b");
    const plain = storeOn(server);
    const subA = a.subscribeToAll({ after: 0n });
    const seenByA = (async () => {
      const out: string[] = [];
      for await (const e of subA) if (out.push(`${e.stream}:${e.type}`) === 2) break;
      return out;
    })();
    const ra = await a.append("arq-1", [ev("ArqCreated")], "no_stream");
    const rb = await b.append("arq-1", [ev("ArqCreated"), ev("ArqBound")], "no_stream");
    const rp = await plain.append("arq-1", [ev("ArqCreated")], "no_stream");
    const ra2 = await a.append("host-x", [ev("HostReported")], "no_stream");
    expect(await seenByA).toEqual(["arq-1:ArqCreated", "host-x:HostReported"]);
    expect((await b.readStream("arq-1")).map((e) => [e.stream, e.type])).toEqual([
      ["arq-1", "ArqCreated"],
      ["arq-1", "ArqBound"],
    ]);
    expect((await a.readAll()).map((e) => e.position)).toEqual([ra.position, ra2.position]);
    expect((await a.readAll({ filter: { eventTypes: ["ArqCreated"] } })).map((e) => e.position)).toEqual([ra.position]);
    expect((await plain.readAll()).map((e) => e.position)).toEqual([rp.position]);
    expect(await b.headPosition()).toBe(rb.position);
    expect(await plain.headPosition()).toBe(rp.position);
    expect(await a.headPosition()).toBe(ra2.position);
    // Revisions are per namespace: the same name in another namespace is another stream.
    await expect(a.append("arq-1", [ev("ArqBound")], 0 as ExpectedRevision)).resolves.toMatchObject({ revision: 1 });
    expect(server.log.stream("@cyborg-a/arq-1")).toHaveLength(2);
    expect((await verifyLog(a)).ok).toBe(true);
  });
});

describe("esdb adapter: the global chain", () => {
  it("records checkpoints in the namespace as appends go on; verify then finds a stream's last event cut on the server", async () => {
    const server = new EsdbStandIn();
    const store = new EsdbEventStore(server.connect(), { namespace: "a", checkpointInterval: 4 });
    opened.push(store);
    for (let i = 0; i < 6; i++) await store.append(`s-${i % 2}`, [ev("E"), ev("E")], "any");
    for (let i = 0; i < 4; i++) await store.append("other", [ev("O"), ev("O")], "any");
    await store.recordCheckpoints();
    const checkpoints = await store.readCheckpoints();
    expect(checkpoints[0]).toEqual({ position: 0n, hash: GENESIS, version: 2 });
    expect(checkpoints.length).toBeGreaterThanOrEqual(5);
    expect(await store.readCheckpoints({ after: checkpoints[1]!.position, maxCount: 1 })).toEqual([checkpoints[2]]);
    const clean = await verifyLog(store);
    expect(clean.firstBreaks).toEqual([]);
    expect(clean.ok).toBe(true);
    expect(clean.checkpoints).toBeGreaterThanOrEqual(3);
    // The last event of s-0, before the newest checkpoint: no stream chain can show it is gone.
    const lastOfS0 = (await store.readStream("s-0")).at(-1)!;
    expect(lastOfS0.position < checkpoints.at(-1)!.position).toBe(true);
    server.log.cut("@a/s-0", BigInt(lastOfS0.revision));
    const report = await verifyLog(store);
    expect(report.ok).toBe(false);
    expect(report.firstBreaks[0]!.reason).toMatch(/global chain differs/);
  });
});

describe("esdb adapter: a subscription ends with the server's error", () => {
  it("a dropped connection ends the iteration with an error (a follower then subscribes again from its checkpoint)", async () => {
    const server = new EsdbStandIn();
    const store = storeOn(server);
    await store.append("s", [ev("A")], "no_stream");
    const sub = store.subscribeToAll();
    const it = sub[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ type: "A" });
    const pending = it.next();
    await new Promise((r) => setImmediate(r));
    expect(server.dropSubscriptions()).toBe(1);
    await expect(pending).rejects.toBeInstanceOf(UnavailableError);
    await sub.close();
    const again = store.subscribeToAll({ after: (await store.headPosition())! });
    const next = again[Symbol.asyncIterator]().next();
    await store.append("s", [ev("B")], 0);
    expect((await next).value).toMatchObject({ type: "B" });
    await again.close();
  });
});

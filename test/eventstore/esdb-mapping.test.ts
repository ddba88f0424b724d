/**
 * The EventStoreDB adapter's mapping, without a server: what an append sends, what a read of that
 * gives back, where reads start and which events of $all are the application's.
 */
import { ANY, NO_STREAM, START, STREAM_EXISTS, type AllStreamJSONRecordedEvent, type AllStreamResolvedEvent, type JSONEventData } from "@eventstore/db-client";
import { describe, expect, it } from "vitest";
import { CHAIN_HASH, CHAIN_VERSION_KEY, checkStreamName, fromPosition, inNamespace, namespacePrefix, ORIGINAL_ID, ours, serverFilter, toEsdbExpected, toProposed, toRecorded } from "../../src/infra/eventstore/esdb-mapping.js";
import type { EventMetadata, NewEvent } from "../../src/infra/eventstore/port.js";

const metadata: EventMetadata = { principal: "admin", correlationId: "corr-1", causationId: "cause-1", at: "2026-03-01T10:00:00.000Z", traceparent: "00-abc-def-01" };
const UUID = "0b6e7c1e-2f43-4c55-9a1d-6f1f5c3e8a10";
const event = (id: string): NewEvent => ({ id, type: "ArqCreated", data: { arqUuid: "arq-1", group: 0 }, metadata });
const created = new Date("2026-03-01T10:00:01.000Z");

/** What the server gives back for an event it stored as `sent` (reads of $all carry its position). */
function stored(sent: JSONEventData, o: { stream?: string; revision?: bigint; position?: bigint } = {}): AllStreamJSONRecordedEvent {
  const position = o.position ?? 42n;
  return {
    streamId: o.stream ?? "arq-arq-1",
    id: sent.id,
    isJson: true,
    revision: o.revision ?? 3n,
    type: sent.type,
    created,
    data: sent.data,
    metadata: sent.metadata,
    position: { commit: position, prepare: position },
  } as AllStreamJSONRecordedEvent;
}
const resolved = (e: AllStreamJSONRecordedEvent | undefined): AllStreamResolvedEvent => ({ event: e, commitPosition: e?.position.commit });

describe("esdb mapping: an event sent and read back", () => {
  it("keeps a lower-case canonical UUID as the event id, with nothing added for it", () => {
    const sent = toProposed(event(UUID), "hash-1", 1);
    expect(sent).toEqual({ id: UUID, contentType: "application/json", type: "ArqCreated", data: { arqUuid: "arq-1", group: 0 }, metadata: { ...metadata, [CHAIN_HASH]: "hash-1" } });
    expect(toRecorded(stored(sent), undefined)).toEqual({
      id: UUID,
      stream: "arq-arq-1",
      revision: 3,
      position: 42n,
      type: "ArqCreated",
      data: { arqUuid: "arq-1", group: 0 },
      metadata,
      recordedAt: created,
      hash: "hash-1",
      chainVersion: undefined,
    });
  });

  it("sends any other id as a name-based UUID, the same for the same id, and reads the original back", () => {
    for (const id of ["evt-1", UUID.toUpperCase(), `{${UUID}}`]) {
      const sent = toProposed(event(id), "hash-1", 1);
      expect(sent.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(sent.id).toBe(toProposed(event(id), "other-hash", 2).id);
      expect(sent.metadata).toEqual({ ...metadata, [CHAIN_HASH]: "hash-1", [ORIGINAL_ID]: id });
      const back = toRecorded(stored(sent), undefined);
      expect({ id: back.id, metadata: back.metadata }).toEqual({ id, metadata });
    }
    expect(toProposed(event("evt-1"), "h", 1).id).not.toBe(toProposed(event("evt-2"), "h", 1).id);
  });

  it("sends the chain version only when it is not 1, and reads it back", () => {
    const v2 = toProposed(event(UUID), "hash-2", 2);
    expect(v2.metadata).toEqual({ ...metadata, [CHAIN_HASH]: "hash-2", [CHAIN_VERSION_KEY]: 2 });
    expect(toRecorded(stored(v2), undefined)).toMatchObject({ hash: "hash-2", chainVersion: 2, metadata });
    expect(toProposed(event(UUID), "hash-1", 1).metadata).not.toHaveProperty(CHAIN_VERSION_KEY);
  });

  it("takes the position from the event, else from the read, and refuses an event without one", () => {
    const sent = toProposed(event(UUID), "hash-1", 1);
    const noPosition = { ...stored(sent), position: undefined } as unknown as AllStreamJSONRecordedEvent;
    expect(toRecorded(stored(sent, { position: 7n }), 9n).position).toBe(7n);
    expect(toRecorded(noPosition, 9n).position).toBe(9n);
    expect(() => toRecorded(noPosition, undefined)).toThrow(/without a position/);
  });

  it("reads an event without metadata with empty metadata and no hash", () => {
    const bare = { ...stored(toProposed(event(UUID), "h", 1)), metadata: undefined } as unknown as AllStreamJSONRecordedEvent;
    expect(toRecorded(bare, undefined)).toMatchObject({ id: UUID, metadata: {}, hash: undefined, chainVersion: undefined });
  });
});

describe("esdb mapping: positions and filters", () => {
  const at = (position: bigint, o: { stream?: string; type?: string } = {}) => {
    const e = stored(toProposed(event(UUID), "h", 1), { position, stream: o.stream });
    return resolved({ ...e, type: o.type ?? e.type });
  };

  it("starts reads at the position given (ours() drops it), or at the start", () => {
    expect(fromPosition(undefined)).toBe(START);
    expect(fromPosition(15n)).toEqual({ commit: 15n, prepare: 15n });
  });

  it("keeps only the application's events after the position: `after` is exclusive", () => {
    expect(ours(at(15n), 15n)).toBeUndefined();
    expect(ours(at(14n), 15n)).toBeUndefined();
    expect(ours(at(16n), 15n)).toMatchObject({ id: UUID, position: 16n });
    expect(ours(at(0n), undefined)).toMatchObject({ position: 0n });
    expect(ours(at(20n, { stream: "$stats-127.0.0.1:2113" }), undefined)).toBeUndefined();
    expect(ours(at(20n, { type: "$metadata" }), undefined)).toBeUndefined();
    expect(ours(resolved(undefined), undefined)).toBeUndefined();
  });

  it("sends the server one filter: the exact types as an anchored regex, else stream prefixes, else the namespace", () => {
    const types = serverFilter({ eventTypes: ["ArqCreated", "a.b+c"], streamPrefixes: ["arq-"] });
    expect(types).toMatchObject({ filterOn: "eventType", regex: "^(?:ArqCreated|a\\.b\\+c)$" });
    const regex = new RegExp((types as { regex: string }).regex);
    expect(["ArqCreated", "a.b+c"].every((t) => regex.test(t))).toBe(true);
    expect(["ArqCreatedLater", "xArqCreated", "aXbbc"].some((t) => regex.test(t))).toBe(false);
    expect(serverFilter({ streamPrefixes: ["arq-", "host-"] })).toMatchObject({ filterOn: "streamName", prefixes: ["arq-", "host-"] });
    expect(serverFilter({ streamPrefixes: ["arq-"] }, "@a/")).toMatchObject({ filterOn: "streamName", prefixes: ["@a/arq-"] });
    expect(serverFilter(undefined, "@a/")).toMatchObject({ filterOn: "streamName", prefixes: ["@a/"] });
    // The default namespace: every stream but system streams and other namespaces'.
    const all = serverFilter(undefined);
    expect(all).toMatchObject({ filterOn: "streamName", regex: "^[^$@]" });
    const anyStream = new RegExp((all as { regex: string }).regex);
    expect(["arq-1", "host-a"].every((n) => anyStream.test(n))).toBe(true);
    expect(["$stats-1", "$$arq-1", "@a/arq-1"].some((n) => anyStream.test(n))).toBe(false);
    expect(serverFilter({})).toEqual(all);
  });

  it("names a namespace's streams `@<namespace>/`, and keeps every other stream out of it", () => {
    expect(namespacePrefix(undefined)).toBe("");
    expect(namespacePrefix("")).toBe("");
    expect(namespacePrefix("cyborg-a")).toBe("@cyborg-a/");
    for (const bad of ["-a", "a/b", "$a", "a b", "x".repeat(65)]) expect(() => namespacePrefix(bad)).toThrow(/EVENTSTORE_NAMESPACE/);
    expect(inNamespace("@a/arq-1", "@a/")).toBe(true);
    expect([inNamespace("@b/arq-1", "@a/"), inNamespace("arq-1", "@a/"), inNamespace("@ab/arq-1", "@a/")]).toEqual([false, false, false]);
    expect(inNamespace("arq-1", "")).toBe(true);
    expect([inNamespace("@a/arq-1", ""), inNamespace("$stats", ""), inNamespace("$$arq-1", "")]).toEqual([false, false, false]);
    for (const bad of ["", "$x", "@a/x"]) expect(() => checkStreamName(bad)).toThrow(TypeError);
    expect(() => checkStreamName("arq-@1")).not.toThrow();
  });

  it("reads a namespaced event back under the application's stream name; other namespaces' are not ours", () => {
    const sent = toProposed(event(UUID), "h", 1);
    const e = resolved(stored(sent, { stream: "@a/arq-arq-1", position: 50n }));
    expect(ours(e, undefined, "@a/")).toMatchObject({ stream: "arq-arq-1", position: 50n });
    expect(ours(e, undefined, "@b/")).toBeUndefined();
    expect(ours(e, undefined)).toBeUndefined();
  });

  it("maps expected revisions", () => {
    expect([toEsdbExpected("no_stream"), toEsdbExpected("stream_exists"), toEsdbExpected("any"), toEsdbExpected(4)]).toEqual([NO_STREAM, STREAM_EXISTS, ANY, 4n]);
  });
});

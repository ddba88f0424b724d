/**
 * The one request the adapter builds itself (esdb-filtered-read.ts): a read of $all with a
 * server-side filter. No server here: the client's gRPC stream factory is replaced, and the request
 * it would have sent is checked field by field against the protocol (streams.proto, ReadReq).
 */
import { Readable } from "node:stream";
import { BACKWARDS, END, EventStoreDBClient, eventTypeFilter, streamNameFilter } from "@eventstore/db-client";
import type { ReadReq } from "@eventstore/db-client/generated/streams_pb.js";
import { describe, expect, it } from "vitest";
import { filteredReadAll } from "../../src/infra/eventstore/esdb-filtered-read.js";

/** The request a read would send, and its (empty) answer read to the end. */
async function sent(read: (client: EventStoreDBClient) => AsyncIterable<unknown>): Promise<ReadReq> {
  const client = EventStoreDBClient.connectionString("esdb://127.0.0.1:1?tls=false");
  let request: ReadReq | undefined;
  const fakeGrpc = { read: (req: ReadReq) => ((request = req), Readable.from([])) };
  Object.assign(client, { GRPCStreamCreator: (_c: unknown, _name: string, create: (c: unknown) => unknown) => async () => create(fakeGrpc) });
  const got: unknown[] = [];
  for await (const e of read(client)) got.push(e);
  expect(got).toEqual([]);
  await client.dispose();
  return request!;
}

describe("esdb: a read of $all with a server-side filter", () => {
  it("sends the event type regex, the count, the direction and the start as the protocol has them", async () => {
    const req = await sent((c) => filteredReadAll(c, eventTypeFilter({ regex: "^(?:A|B)$" }), { fromPosition: { commit: 1234n, prepare: 1234n }, maxCount: 7 }));
    const o = req.getOptions()!;
    expect(o.getFilter()!.getEventType()!.getRegex()).toBe("^(?:A|B)$");
    expect(o.getFilter()!.hasStreamIdentifier()).toBe(false);
    expect(o.getFilter()!.hasCount()).toBe(true);
    expect(o.getCount()).toBe("7");
    expect(o.getReadDirection()).toBe(0);
    expect(o.getAll()!.getPosition()!.getCommitPosition()).toBe("1234");
    expect(o.getAll()!.getPosition()!.getPreparePosition()).toBe("1234");
    expect(o.hasNoFilter()).toBe(false);
    expect(o.hasSubscription()).toBe(false);
  });

  it("sends stream name prefixes, backwards from the end", async () => {
    const req = await sent((c) => filteredReadAll(c, streamNameFilter({ prefixes: ["@a/"] }), { direction: BACKWARDS, fromPosition: END }));
    const o = req.getOptions()!;
    expect(o.getFilter()!.getStreamIdentifier()!.getPrefixList()).toEqual(["@a/"]);
    expect(o.getReadDirection()).toBe(1);
    expect(o.getAll()!.hasEnd()).toBe(true);
    expect(o.getCount()).toBe(String(Number.MAX_SAFE_INTEGER));
  });
});

/**
 * The live audit feed refuses a position the event store does not know: on
 * EventStoreDB (here its stand-in) a position is a byte offset, and one where no event starts is the
 * caller's mistake, answered as BAD_USER_INPUT on that subscription, while the connection serves on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { collect, startTestService, type TestService } from "../api/harness.js";
import { CREATE_PROFILE } from "../api/operations.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";

const FEED = `subscription($after: String) { events(after: $after) { id position type } }`;

describe("the audit feed on EventStoreDB", () => {
  let t: TestService;

  beforeAll(async () => {
    const store = new EsdbEventStore(new EsdbStandIn().connect({}), {});
    t = await startTestService({ overrides: { store } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses a position where no event starts with BAD_USER_INPUT, and a good one feeds events", async () => {
    await t.ok("admin", CREATE_PROFILE, { input: { name: "feed-pos", groups: [{ "resources:FPGA": "1" }] } });
    const head = (await t.service.store.headPosition())!;
    const ws = t.ws("admin");
    const bad = collect<{ events: { position: string } }>(ws, FEED, { after: String(head + 1n) });
    await expect.poll(() => bad.errors.length, { timeout: 15_000 }).toBeGreaterThan(0);
    // A GraphQL error on this subscription (graphql-ws "error" message), not a closed socket.
    expect(bad.errors[0]).toEqual([expect.objectContaining({ extensions: { code: "BAD_USER_INPUT", field: "after" } })]);

    const good = collect<{ events: { position: string; type: string } }>(ws, FEED, { after: "0" });
    const [first] = await good.next(1);
    expect(BigInt(first!.events.position)).toBeGreaterThan(0n);
    good.unsubscribe();
  });
});

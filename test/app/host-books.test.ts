/**
 * Closing the books of host streams through the application: a period closes with a summary
 * after HOST_PERIOD_EVENTS events, at the revision written; a host is then loaded from its latest
 * summary; and a summary never takes a write's place (a writer in between wins).
 */
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { loadAggregate, readLatestPeriod } from "../../src/app/handle.js";
import { closeBooks, encodeHostState } from "../../src/domain/inventory/books.js";
import { hostDecider } from "../../src/domain/inventory/decider.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { HostStates } from "../../src/reactors/placement/host-states.js";
import type { ReadStreamOptions, RecordedEvent } from "../../src/infra/eventstore/port.js";
import { ADMIN, ctx, fpga } from "./support.js";

const HOST = "compute1";
const RP = rpUuidFor(`${HOST}_0000:af:00.0`);
const agent = { ...ADMIN, principal: "agent:compute1" };
const nova = ctx();
const binder = { principal: "system:binder", correlationId: "b", causationId: "b", at: "2026-03-01T10:02:00.000Z" };

/** A store that counts the events each readStream returns. */
class CountingStore extends MemoryEventStore {
  read = 0;
  override async readStream(name: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    const events = await super.readStream(name, options);
    this.read += events.length;
    return events;
  }
}

async function world(maxEvents: number) {
  const store = new CountingStore();
  let n = 0;
  const app = new Application({ store, newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`, hostBooks: { maxEvents, maxDays: 0 } });
  await app.reportHostInventory(agent, HOST, [fpga(HOST, "af", 2)]);
  await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
  return { app, store };
}

/** One boot: an ARQ bound on the host, then deleted (its handle released). */
async function boot(app: Application, i: number) {
  const [arq] = await app.createArqs(nova, { deviceProfileName: "dp1" });
  await app.startBinds(nova, [{ arqUuid: arq!.uuid, hostname: HOST, deviceRpUuid: RP, instanceUuid: `vm-${i}` }]);
  expect(await app.allocateForArq(binder, arq!.uuid)).toMatchObject({ ok: true, arq: { state: "BOUND" } });
  await app.deleteArqs(nova, { arqUuids: [arq!.uuid] });
}

const hostEvents = (store: MemoryEventStore) => store.readStream(stream.host(HOST));

describe("closing the books of host streams", () => {
  it("appends a summary once a period holds HOST_PERIOD_EVENTS events, and the next period counts from it", async () => {
    const { app, store } = await world(10);
    for (let i = 0; i < 12; i++) await boot(app, i);
    const events = await hostEvents(store);
    const summaries = events.filter((e) => e.type === "HostBooksClosed");
    expect(summaries.length).toBeGreaterThanOrEqual(2);
    // Each at the revision after a period of at least 10 events, naming its own revision.
    let start = -1;
    for (const s of summaries) {
      expect(s.revision - start - (start < 0 ? 0 : 1)).toBeGreaterThanOrEqual(10);
      expect((s.data as { revision: number }).revision).toBe(s.revision);
      expect(s.metadata.principal).toBe("system:host-books");
      start = s.revision;
    }
    // The summary holds the state folded from the start, up to the event before it.
    const last = summaries.at(-1)!;
    const folded = events.slice(0, last.revision).reduce((st, e) => hostDecider.evolve(st, e as never), hostDecider.initialState());
    expect((last.data as { state: unknown }).state).toEqual(JSON.parse(JSON.stringify(encodeHostState(folded))));
  });

  it("loads a host from its latest summary, reading one period, to the state folded from the start", async () => {
    const { app, store } = await world(10);
    for (let i = 0; i < 150; i++) await boot(app, i);
    const events = await hostEvents(store);
    const latest = events.findLast((e) => e.type === "HostBooksClosed")!;
    store.read = 0;
    const loaded = await loadAggregate(store, stream.host(HOST), hostDecider, undefined, "HostBooksClosed");
    // One backwards page (256 events at most), of a stream of more than that.
    expect(events.length).toBeGreaterThan(300);
    expect(events.length - latest.revision).toBeLessThanOrEqual(12);
    expect(store.read).toBeLessThanOrEqual(256);
    const fromStart = await loadAggregate(store, stream.host(HOST), hostDecider);
    expect(loaded.revision).toBe(fromStart.revision);
    expect(JSON.stringify(encodeHostState({ ...loaded.state, books: null }))).toBe(JSON.stringify(encodeHostState({ ...fromStart.state, books: null })));
    expect(loaded.state.books).toEqual(fromStart.state.books);
    // The Placement sync's cold load takes the same path.
    store.read = 0;
    const placement = await new HostStates(store).load(HOST);
    expect(store.read).toBeLessThanOrEqual(256);
    expect(placement.revision).toBe(fromStart.revision);
    expect(JSON.stringify(encodeHostState(placement.state))).toBe(JSON.stringify(encodeHostState(loaded.state)));
    // A fresh process (no cache) binds on it as the first one would.
    const again = new Application({ store, hostBooks: { maxEvents: 10, maxDays: 0 } });
    await boot(again, 99);
  });

  it("reads a stream without a summary whole, and one page at a time backwards to its summary", async () => {
    const store = new MemoryEventStore();
    const name = stream.host(HOST);
    const plain = { id: "", type: "HostReportSettled", data: { hostname: HOST, digest: "d", unchanged: 0, at: ADMIN.at }, metadata: { principal: "p", correlationId: "c", causationId: "c", at: ADMIN.at } };
    await store.append(name, Array.from({ length: 600 }, (_, i) => ({ ...plain, id: `e-${i}` })), "no_stream");
    expect((await readLatestPeriod(store, name, "HostBooksClosed")).map((e) => e.revision)).toEqual(Array.from({ length: 600 }, (_, i) => i));
    await store.append(name, [{ ...plain, id: "summary", type: "HostBooksClosed", data: { hostname: HOST, revision: 600, state: {}, at: ADMIN.at } }], 599);
    await store.append(name, Array.from({ length: 300 }, (_, i) => ({ ...plain, id: `f-${i}` })), 600);
    const period = await readLatestPeriod(store, name, "HostBooksClosed");
    expect(period.map((e) => e.revision)).toEqual(Array.from({ length: 301 }, (_, i) => 600 + i));
  });

  it("never closes the books when HOST_PERIOD_EVENTS is 0", async () => {
    const { app, store } = await world(0);
    for (let i = 0; i < 12; i++) await boot(app, i);
    expect((await hostEvents(store)).some((e) => e.type === "HostBooksClosed")).toBe(false);
  });

  it("drops a summary that a concurrent writer overtook: the write stands, and the next write closes the books", async () => {
    const { app, store } = await world(1000);
    const name = stream.host(HOST);
    const state = (await loadAggregate(store, name, hostDecider)).state;
    const revision = (await hostEvents(store)).length - 1;
    // Another process wrote meanwhile: a summary decided at `revision` is refused.
    await boot(app, 0);
    const refused = await store.appendSequence([{ stream: name, events: [{ id: "s", type: "HostBooksClosed", data: closeBooks(state, revision, ADMIN.at).data, metadata: { principal: "p", correlationId: "c", causationId: "c", at: ADMIN.at } }], expectedRevision: revision }]);
    expect(refused.refusal?.name).toBe("WrongExpectedRevisionError");
    // Through the application: a period due when two writers race ends with one summary, after both writes.
    const racing = new Application({ store, hostBooks: { maxEvents: 1, maxDays: 0 } });
    await Promise.all([boot(racing, 1), boot(app, 2)]);
    const events = await hostEvents(store);
    expect(events.filter((e) => e.type === "AttachHandleAllocated")).toHaveLength(3);
    expect(events.filter((e) => e.type === "HostBooksClosed").length).toBeGreaterThan(0);
    for (const s of events.filter((e) => e.type === "HostBooksClosed")) {
      const folded = events.slice(0, s.revision).reduce((st, e) => hostDecider.evolve(st, e as never), hostDecider.initialState());
      expect((s.data as { state: unknown }).state).toEqual(JSON.parse(JSON.stringify(encodeHostState(folded))));
    }
  });
});

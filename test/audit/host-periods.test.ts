/**
 * Retention of a host stream's closed periods on the embedded log: the events before the newest
 * summary older than the cutoff move to the archive; the host is read, decided on and appended to
 * as before; audit verifies and reads the whole stream across archive and live log; and a read
 * model rebuilt after it (replaying the archived periods) is the one built before.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { projections } from "../../projections/index.js";
import { Application } from "../../src/app/application.js";
import { loadAggregate } from "../../src/app/handle.js";
import { history as historyOf } from "../../src/audit/history.js";
import { Archive } from "../../src/audit/retention/archive.js";
import { ArchiveReadingStore, replayLog, verifyWithArchive } from "../../src/audit/retention/archived-log.js";
import { dueHostPeriods } from "../../src/audit/retention/host-periods.js";
import { retractions, runRetention } from "../../src/audit/retention/retention.js";
import { encodeHostState } from "../../src/domain/inventory/books.js";
import { hostDecider } from "../../src/domain/inventory/decider.js";
import { stream } from "../../src/domain/shared/types.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { EventLoopTurns } from "../../src/infra/event-loop-turns.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { replay } from "../../src/reactors/projector/rebuild.js";
import { Slots } from "../../src/reactors/projector/slots.js";
import { damageFirstSegment } from "../support/archive-damage.js";
import { BOOKS, boot, bootHistory, HOST } from "../support/host-boots.js";

const dirs: string[] = [];
const stores: LmdbEventStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), "cyborg-es-host-periods-"));
  dirs.push(dir);
  const store = await LmdbEventStore.open(join(dir, "events"), { checkpointInterval: 4 });
  stores.push(store);
  const archiveDir = join(dir, "archive");
  return { store, archiveDir, archive: new Archive(archiveDir, store.archiving) };
}

/** Every model but the audit index (which retention trims on purpose), rebuilt from `source`. */
async function models(store: EventStore, source?: Pick<EventStore, "readAll">) {
  const readStore = new MemoryReadStore();
  const rebuilt = projections.filter((p) => p.name !== "audit");
  const log = { error: () => undefined };
  await replay(store, readStore, new Slots(rebuilt).all.slice(), { upTo: await store.headPosition(), source, batchSize: 500, log, now: Date.now });
  return Object.fromEntries(await Promise.all(rebuilt.map(async (p) => [p.name, (await readStore.dump(p.name)).keys] as const)));
}

const later = () => new Date(Date.now() + 60_000);
const hostStream = stream.host(HOST);

describe("retention of a host stream's closed periods", () => {
  it("archives the periods before the newest summary older than the cutoff; the host reads and takes writes as before", async () => {
    const { store, archiveDir } = await setup();
    await bootHistory(store, 20);
    const whole = await store.readStream(hostStream);
    const latest = whole.findLast((e) => e.type === "HostBooksClosed")!;
    const state = await loadAggregate(store, hostStream, hostDecider);

    const r = await runRetention(store, { cutoff: later(), dir: archiveDir });
    expect(r.events).toBeGreaterThanOrEqual(latest.revision);
    // The live stream starts at its latest summary; its revisions go on.
    const live = await store.readStream(hostStream);
    expect(live[0]!.revision).toBe(latest.revision);
    expect(live.map((e) => e.id)).toEqual(whole.slice(latest.revision).map((e) => e.id));
    expect(await store.readStream(hostStream, { direction: "backwards", fromRevision: latest.revision - 1 })).toEqual([]);
    // Folded from the summary: the same host, in a process that has nothing cached.
    const fresh = new Application({ store, hostBooks: BOOKS });
    const loaded = await loadAggregate(store, hostStream, hostDecider, undefined, "HostBooksClosed");
    expect(loaded.revision).toBe(state.revision);
    expect(JSON.stringify(encodeHostState(loaded.state))).toBe(JSON.stringify(encodeHostState(state.state)));
    await boot(fresh, 100);
    expect((await store.readStream(hostStream, { direction: "backwards", maxCount: 1 }))[0]!.revision).toBeGreaterThan(state.revision);
    // A second run finds nothing more before the same summary.
    const again = await runRetention(store, { cutoff: new Date(latest.recordedAt.getTime()), dir: archiveDir });
    expect(again.events).toBe(0);
  });

  it("verifies archive and live log together, finds a changed byte, and reads the whole stream back for audit", async () => {
    const { store, archiveDir, archive } = await setup();
    await bootHistory(store, 12);
    const whole = await store.readStream(hostStream);
    await runRetention(store, { cutoff: later(), dir: archiveDir });
    const report = await verifyWithArchive(store, archive);
    expect(report.firstBreaks).toEqual([]);
    expect(report.ok).toBe(true);
    const reading = new ArchiveReadingStore(store, archive);
    expect((await reading.readStream(hostStream)).map((e) => [e.id, e.revision, e.hash])).toEqual(whole.map((e) => [e.id, e.revision, e.hash]));
    expect((await reading.readStream(hostStream, { fromRevision: 2, maxCount: 3 })).map((e) => e.revision)).toEqual([2, 3, 4]);

    await damageFirstSegment(store.archiving!, archiveDir, 1 / 3);
    const broken = await verifyWithArchive(store, archive);
    expect(broken.ok).toBe(false);
    expect(broken.firstBreaks[0]!.reason).toMatch(/segment 1 .*SHA-256 differs/);
  });

  it("answers a device's history from the archive and the live log, before and after the index drops archived entries", async () => {
    const { store, archiveDir, archive } = await setup();
    await bootHistory(store, 12);
    const { audit } = await import("../../projections/audit/projection.js").then((m) => ({ audit: m.projection }));
    const indexOf = async (source?: Pick<EventStore, "readAll">) => {
      const index = new MemoryReadStore();
      await replay(store, index, new Slots([audit]).all.slice(), { upTo: await store.headPosition(), source, batchSize: 500, log: { error: () => undefined }, now: Date.now });
      return index;
    };
    const device = [...(await loadAggregate(store, hostStream, hostDecider)).state.devices.keys()][0]!;
    const reading = new ArchiveReadingStore(store, archive);
    const index = await indexOf();
    const before = (await historyOf(reading, index, device, 500)).items.map((e) => [e.type, e.position]);
    expect(before.map(([type]) => type)).toContain("DeviceDiscovered");
    expect(before.map(([type]) => type)).toContain("AttachHandleReleased");
    await runRetention(store, { cutoff: later(), dir: archiveDir });
    // The index once retention dropped the archived entries (RetentionScheduler.retractArchived).
    const archived = [];
    for await (const e of archive.events()) archived.push(e);
    const head = await store.headPosition();
    // (The projector commits them with its next batch; here, with a checkpoint one past the head.)
    await index.applyBatch("audit", retractions(archived), head! + 1n);
    expect((await historyOf(store, index, device, 500)).items.map((e) => e.type)).not.toContain("DeviceDiscovered");
    expect((await historyOf(reading, index, device, 500)).items.map((e) => [e.type, e.position])).toEqual(before);
    // A rebuild of the index replays the archived periods: the same history.
    expect((await historyOf(reading, await indexOf(replayLog(store, archive)), device, 500)).items.map((e) => [e.type, e.position])).toEqual(before);
  });

  it("rebuilds the read models after retention, with the archived periods replayed, to the models built before", async () => {
    const { store, archiveDir, archive } = await setup();
    await bootHistory(store, 15);
    const before = await models(store);
    expect(Object.keys(before["device-tree"]!).length).toBeGreaterThan(0);
    await runRetention(store, { cutoff: later(), dir: archiveDir });
    expect(await models(store, replayLog(store, archive))).toEqual(before);
    // The live log alone no longer holds the host's discovery: a rebuild from it alone would differ.
    expect(await models(store)).not.toEqual(before);
  });
});

describe("looking for a fleet's closed periods", () => {
  it("gives the event loop turns while it reads every host stream from its end", async () => {
    const store = new MemoryEventStore();
    const meta = { principal: "test", correlationId: "c", causationId: "c", at: new Date(0).toISOString() };
    for (let h = 0; h < 2_000; h++) {
      const events = Array.from({ length: 40 }, (_, i) => ({ id: randomUUID(), type: "DeviceStatusChanged", data: { hostname: `h${h}`, deviceUuid: `d${i}`, status: "ENABLED" }, metadata: meta }));
      await store.append(stream.host(`h${h}`), events, "any");
    }
    // Counts the event loop's turns while it reads: an immediate that schedules the next runs once per turn.
    const turnsWhile = async (turns: EventLoopTurns) => {
      let n = 0;
      let counting = true;
      const count = () => {
        n++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const found = await dueHostPeriods(store, new Date(), 100, { has: () => false }, undefined, turns);
      counting = false;
      return { ...found, n };
    };
    // The in-memory log's reads resolve without a turn: a walk that never gives one lets none run.
    expect((await turnsWhile(new EventLoopTurns(Infinity))).n).toBeLessThanOrEqual(1);
    // Asked to give a turn at every step (held 0 ms at most; the default gives one every 4 ms): one per host.
    const { due, cursor, n } = await turnsWhile(new EventLoopTurns(0));
    expect(due).toEqual([]);
    expect(cursor).toBeUndefined();
    expect(n).toBeGreaterThanOrEqual(2_000);
  });
});

/**
 * Retention on the embedded log: ended streams older than the cutoff move into archive segments,
 * the live log keeps the rest, and audit still reads and verifies the archived events.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Archive } from "../../src/audit/retention/archive.js";
import { ArchiveReadingStore, verifyWithArchive } from "../../src/audit/retention/archived-log.js";
import { runRetention } from "../../src/audit/retention/retention.js";
import { verifyLog } from "../../src/audit/verify.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import type { NewEvent } from "../../src/infra/eventstore/port.js";
import { damageFirstSegment } from "../support/archive-damage.js";

const meta = (c: string) => ({ principal: "nova", correlationId: c, causationId: c, at: "2026-01-01T00:00:00.000Z" });
const ev = (type: string, data: unknown, c = "c-1"): NewEvent => ({ id: randomUUID(), type, data, metadata: meta(c) });

const dirs: string[] = [];
const stores: LmdbEventStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), "cyborg-es-retention-"));
  dirs.push(dir);
  const store = await LmdbEventStore.open(join(dir, "events"), { checkpointInterval: 4 });
  stores.push(store);
  return { store, archiveDir: join(dir, "archive"), archive: new Archive(join(dir, "archive"), store.archiving) };
}

/** A host stream first (the log's first event), then ARQs: `deleted` of them deleted, `live` not, interleaved with host reports. */
async function history(store: LmdbEventStore, deleted: number, live: number): Promise<string[]> {
  await store.append("host-compute1", [ev("HostReported", { n: 0 })], "any");
  const gone: string[] = [];
  for (let i = 0; i < deleted + live; i++) {
    const arqUuid = randomUUID();
    const c = `req-${i}`;
    await store.append(`arq-${arqUuid}`, [ev("ArqCreated", { arqUuid, deviceProfileUuid: "p-1" }, c)], "no_stream");
    await store.append("host-compute1", [ev("HostReported", { n: i + 1 })], "any");
    if (i < deleted) {
      await store.append(`arq-${arqUuid}`, [ev("ArqBindStarted", { arqUuid, instanceUuid: "vm-1" }, c), ev("ArqDeleted", { arqUuid, deviceProfileUuid: "p-1", previousInstanceUuid: "vm-1", releasedHandleUuid: null }, c)], 0);
      gone.push(arqUuid);
    }
  }
  await store.append("host-compute1", [ev("HostReported", { n: "last" })], "any");
  return gone;
}

const later = () => new Date(Date.now() + 60_000);

describe("retention on the embedded log", () => {
  it("moves ended streams into a segment the live log records, and keeps every other stream", async () => {
    const { store, archiveDir } = await setup();
    const gone = await history(store, 6, 3);
    const before = (await store.readAll()).length;
    const r = await runRetention(store, { cutoff: later(), dir: archiveDir });
    expect(r).toMatchObject({ segments: 1, streams: 6, events: 18 });
    for (const uuid of gone) expect(await store.readStream(`arq-${uuid}`)).toEqual([]);
    expect((await store.readAll()).length).toBe(before - 18);
    expect((await store.readAll()).every((e) => !gone.some((g) => e.stream === `arq-${g}`))).toBe(true);
    const [segment] = await store.archiving.readArchiveSegments();
    expect(segment).toMatchObject({ seq: 1, events: 18, streams: 6 });
    // Nothing more is due: a second run writes nothing.
    expect((await runRetention(store, { cutoff: later(), dir: archiveDir })).segments).toBe(0);
  });

  it("archives nothing ended after the cutoff, and nothing in a dry run", async () => {
    const { store, archiveDir } = await setup();
    await history(store, 4, 1);
    expect((await runRetention(store, { cutoff: new Date(Date.now() - 60_000), dir: archiveDir })).streams).toBe(0);
    const dry = await runRetention(store, { cutoff: later(), dir: archiveDir, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, streams: 4, events: 12, segments: 0 });
    expect(await store.archiving.readArchiveSegments()).toEqual([]);
    expect((await store.readAll()).filter((e) => e.type === "ArqDeleted")).toHaveLength(4);
  });

  it("refuses, whole, a removal whose stream moved on since it was archived", async () => {
    const { store } = await setup();
    const [uuid] = await history(store, 1, 1);
    const record = { seq: 1, file: "x", sha256: "0", events: 3, streams: 1, first: "1", last: "1", previous: "0", at: "" };
    await expect(store.archiving.removeStreams([{ stream: `arq-${uuid}`, revision: 1 }], record)).rejects.toThrow(/not 1 as archived/);
    expect(await store.readStream(`arq-${uuid}`)).toHaveLength(3);
    expect(await store.archiving.readArchiveSegments()).toEqual([]);
  });

  it("verifies the archive and the live log together; the live log alone misses the archived events", async () => {
    const { store, archiveDir, archive } = await setup();
    await history(store, 8, 3);
    await runRetention(store, { cutoff: later(), dir: archiveDir, maxStreams: 3 });
    expect((await store.archiving.readArchiveSegments()).length).toBe(3);
    const both = await verifyWithArchive(store, archive);
    expect(both.firstBreaks).toEqual([]);
    expect(both).toMatchObject({ ok: true, events: 1 + 8 * 3 + 3 + 11 + 1 });
    expect(both.checkpoints).toBeGreaterThan(3);
    expect((await verifyLog(store)).ok).toBe(false);
  });

  it("finds a changed byte in an archive segment", async () => {
    const { store, archiveDir, archive } = await setup();
    await history(store, 5, 1);
    await runRetention(store, { cutoff: later(), dir: archiveDir });
    await damageFirstSegment(store.archiving!, archiveDir);
    const report = await verifyWithArchive(store, archive);
    expect(report.ok).toBe(false);
    expect(report.firstBreaks[0]!.reason).toMatch(/segment 1 .*SHA-256 differs/);
    // Its content no longer reads as the events the live log's chain recorded either.
    expect(report.firstBreaks.length).toBeGreaterThan(1);
  });

  it("reads an archived stream back for audit, and keeps the log's first and last events live", async () => {
    const { store, archiveDir, archive } = await setup();
    const [uuid] = await history(store, 2, 0);
    await runRetention(store, { cutoff: later(), dir: archiveDir });
    const reading = new ArchiveReadingStore(store, archive);
    const events = await reading.readStream(`arq-${uuid}`);
    expect(events.map((e) => e.type)).toEqual(["ArqCreated", "ArqBindStarted", "ArqDeleted"]);
    expect((await reading.readStream(`arq-${uuid}`, { fromRevision: 1, maxCount: 1 }))[0]!.type).toBe("ArqBindStarted");
    expect(await archive.refs([`{audit}:object:${uuid}`])).toEqual([]);
    expect((await archive.refs([`{audit}:request:req-0`])).length).toBe(3);
    expect((await store.readAll({ maxCount: 1 }))[0]!.stream).toBe("host-compute1");
  });

  it("finds positions by time across the gaps retention leaves", async () => {
    const { store, archiveDir } = await setup();
    await history(store, 3, 0);
    const head = (await store.headPosition())!;
    await runRetention(store, { cutoff: later(), dir: archiveDir });
    expect(await store.positionAt(later())).toBe(head);
    expect(await store.positionAt(new Date(0))).toBeUndefined();
  });
});

describe("retention and the audit index", () => {
  it("drops archived entries from the live index with the projector's next batch; history and trace still find them in the archive", async () => {
    const { MemoryReadStore } = await import("../../src/infra/readstore/memory.js");
    const { Projector } = await import("../../src/reactors/projector/projector.js");
    const { projection: audit, objectKey, requestKey } = await import("../../projections/audit/projection.js");
    const { RetentionScheduler } = await import("../../src/audit/retention/scheduler.js");
    const { history: auditHistory, trace } = await import("../../src/audit/history.js");
    const { createLogger } = await import("../../src/infra/logger.js");
    const { store, archiveDir, archive } = await setup();
    const [gone] = await history(store, 1, 1);
    const readStore = new MemoryReadStore();
    const projector = new Projector({ events: store, store: readStore, projections: [audit], healthCheckMs: 20 });
    await projector.start();
    const members = async () => (await readStore.getMembers([objectKey("vm-1"), requestKey("req-0")])).map((m) => m.length);
    expect(await members()).toEqual([2, 3]);
    const scheduler = new RetentionScheduler({ store, archive, days: 0, intervalMs: 60_000, index: projector, log: createLogger("silent"), now: later });
    await scheduler.runOnce();
    let done = false;
    const retracted = scheduler.retractArchived().then(() => (done = true));
    // The removals go with the next batch the log brings, once the segment was read.
    for (let n = 0; !done && n < 1000; n++) {
      const r = await store.append("host-compute1", [ev("HostReported", { n: `after-${n}` })], "any");
      await projector.waitFor(r.position);
    }
    await retracted;
    expect(await members()).toEqual([0, 0]);
    const reading = new ArchiveReadingStore(store, archive);
    const h = await auditHistory(reading, readStore, "vm-1", 10);
    expect(h.items.map((i) => i.type)).toEqual(["ArqBindStarted", "ArqDeleted"]);
    const t = await trace(reading, readStore, "req-0", 10);
    expect(t.items.map((i) => i.type)).toEqual(["ArqCreated", "ArqBindStarted", "ArqDeleted"]);
    expect(t.items[0]!.eventId).toBeTruthy();
    expect((await auditHistory(store, readStore, "vm-1", 10)).items).toEqual([]);
    await projector.stop();
    expect(gone).toBeTruthy();
  });

  it("drops archived entries from an idle log's index too: no event has to come", async () => {
    const { MemoryReadStore } = await import("../../src/infra/readstore/memory.js");
    const { Projector } = await import("../../src/reactors/projector/projector.js");
    const { projection: audit, objectKey, requestKey } = await import("../../projections/audit/projection.js");
    const { RetentionScheduler } = await import("../../src/audit/retention/scheduler.js");
    const { createLogger } = await import("../../src/infra/logger.js");
    const { store, archive } = await setup();
    await history(store, 1, 1);
    const readStore = new MemoryReadStore();
    // A health check far away: nothing but the retraction itself wakes the projector.
    const projector = new Projector({ events: store, store: readStore, projections: [audit], healthCheckMs: 600_000 });
    await projector.start();
    const members = async () => (await readStore.getMembers([objectKey("vm-1"), requestKey("req-0")])).map((m) => m.length);
    expect(await members()).toEqual([2, 3]);
    const head = await store.headPosition();
    const scheduler = new RetentionScheduler({ store, archive, days: 0, intervalMs: 60_000, index: projector, log: createLogger("silent"), now: later });
    await scheduler.runOnce();
    await scheduler.retractArchived();
    expect(await members()).toEqual([0, 0]);
    // The removals moved no checkpoint: the index is still at the log's head, which nothing moved.
    expect(await store.headPosition()).toBe(head);
    expect(projector.status().map((p) => p.checkpoint)).toEqual([head!.toString()]);
    await projector.stop();
  });
});

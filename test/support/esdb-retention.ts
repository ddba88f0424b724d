/**
 * Retention on EventStoreDB, as one scenario that runs against the stand-in (test/audit/retention-esdb.test.ts)
 * and against a real server when EVENTSTORE_URL is set (test/eventstore/esdb.test.ts).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { Archive } from "../../src/audit/retention/archive.js";
import { ArchiveReadingStore, verifyWithArchive } from "../../src/audit/retention/archived-log.js";
import { runRetention } from "../../src/audit/retention/retention.js";
import { verifyLog } from "../../src/audit/verify.js";
import { stream } from "../../src/domain/shared/types.js";
import { ChainKeeper } from "../../src/infra/eventstore/esdb-chain.js";
import type { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { damageFirstSegment } from "./archive-damage.js";
import { bootHistory, HOST } from "./host-boots.js";

export const CHECKPOINT_INTERVAL = 4;

/** bootHistory's log, with every chain checkpoint due recorded (unless `checkpoints` is false); the booted ARQs' uuids. */
export async function esdbHistory(store: EsdbEventStore, boots: number, checkpoints = true): Promise<string[]> {
  const { arqs } = await bootHistory(store, boots);
  // Every checkpoint due recorded (the adapter records them in the background as well).
  if (checkpoints) await new ChainKeeper(store, CHECKPOINT_INTERVAL).record();
  return arqs;
}

/**
 * Runs retention on `store` (made with checkpointInterval CHECKPOINT_INTERVAL) and checks what the
 * live log, audit and verify see. `allSkipsRemoved`: reads of $all leave the removed events out
 * (the stand-in; a real server does so only after a scavenge).
 */
export async function retentionScenario(store: EsdbEventStore, o: { allSkipsRemoved: boolean }): Promise<void> {
  const archiveDir = join(await mkdtemp(join(tmpdir(), "cyborg-es-esdb-retention-")), "archive");
  const archive = new Archive(archiveDir, store.archiving);
  const arqs = await esdbHistory(store, 12);
  const hostStream = stream.host(HOST);
  const host = await store.readStream(hostStream);
  const all = await store.readAll();
  const newest = (await store.readCheckpoints()).at(-1)!.position;

  const r = await runRetention(store, { cutoff: new Date(Date.now() + 60_000), dir: archiveDir });
  expect(r.segments).toBeGreaterThan(0);
  // The ended ARQs the run took read as gone, the others as before.
  const deleted: string[] = [];
  for (const uuid of arqs) if ((await store.readStream(`arq-${uuid}`)).length === 0) deleted.push(uuid);
  expect(deleted.length).toBeGreaterThan(0);
  if (o.allSkipsRemoved) {
    // $all no longer returns them either: every event that left is at or before the newest checkpoint.
    const live = new Set((await store.readAll()).map((e) => e.position));
    const gone = all.filter((e) => !live.has(e.position));
    expect(gone.length).toBe(r.events);
    expect(gone.every((e) => e.position <= newest)).toBe(true);
    expect(new Set(gone.filter((e) => e.stream.startsWith("arq-")).map((e) => e.stream.slice(4)))).toEqual(new Set(deleted));
  }
  // The host stream is read from a summary on ($tb); audit reads it whole from archive and live log.
  const liveHost = await store.readStream(hostStream);
  expect(liveHost[0]!.type).toBe("HostBooksClosed");
  expect(liveHost[0]!.revision).toBeGreaterThan(0);
  const reading = new ArchiveReadingStore(store, archive);
  expect((await reading.readStream(hostStream)).map((e) => [e.id, e.revision, e.hash])).toEqual(host.map((e) => [e.id, e.revision, e.hash]));
  expect((await reading.readStream(`arq-${deleted[0]}`)).map((e) => e.type).at(-1)).toBe("ArqDeleted");

  // verify: archive and live log together pass; the live log alone misses the archived events.
  const both = await verifyWithArchive(store, archive);
  expect(both.firstBreaks).toEqual([]);
  // Every event written before the run, and those written since (the segment records, checkpoints).
  const since = (await store.readAll({ after: all.at(-1)!.position })).length;
  expect(since).toBeGreaterThan(0);
  expect(both).toMatchObject({ ok: true, events: all.length + since });
  expect((await verifyLog(store)).ok).toBe(false);
  // Nothing more is due.
  expect((await runRetention(store, { cutoff: new Date(Date.now() + 60_000), dir: archiveDir })).events).toBe(0);

  // A changed byte in a segment is found.
  await damageFirstSegment(store.archiving!, archiveDir);
  const broken = await verifyWithArchive(store, archive);
  expect(broken.ok).toBe(false);
  expect(broken.firstBreaks[0]!.reason).toMatch(/segment 1 .*SHA-256 differs/);
}

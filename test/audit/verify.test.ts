/**
 * audit verify on the embedded log: a clean log, one byte changed in one event (found at that
 * event), an event removed, and a log written before the hash chain existed.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterEach, describe, expect, it } from "vitest";
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { finished } from "node:stream/promises";
import { exportLog, readExport } from "../../src/audit/export.js";
import { verifyLog, type VerifyOptions } from "../../src/audit/verify.js";
import { split, verifyLmdbParallel } from "../../src/audit/verify-parallel.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { NewEvent, RecordedEvent } from "../../src/infra/eventstore/port.js";
import { verifyDir } from "./verify-dir.js";

const meta = { principal: "admin", correlationId: "c-1", causationId: "c-1", at: "2026-11-24T14:03:00.000Z" };
const ev = (i: number): NewEvent => ({ id: randomUUID(), type: "Counted", data: { i, note: `event number ${i}` }, metadata: meta });

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** 60 events over 4 streams, in appends of 1 to 3, closed. */
async function writeLog(checkpointInterval = 16): Promise<{ dir: string; log: RecordedEvent[] }> {
  const dir = await mkdtemp(join(tmpdir(), "cyborg-es-verify-"));
  dirs.push(dir);
  const store = await LmdbEventStore.open(dir, { checkpointInterval });
  let i = 0;
  while (i < 60) {
    const n = (i % 3) + 1;
    await store.append(`counter-${i % 4}`, Array.from({ length: n }, () => ev(i++)), "any");
  }
  const log = await store.readAll();
  await store.close();
  return { dir, log };
}

/** Changes one byte of the stored event at `position` (found by `needle` in its raw bytes). */
function changeOneByte(dir: string, position: number, needle: string): void {
  const env = open({ path: dir, maxDbs: 8 });
  const raw = env.openDB<Buffer, number>({ name: "log", encoding: "binary" });
  const bytes = Buffer.from(raw.getBinary(position)!);
  const at = bytes.indexOf(needle);
  expect(at).toBeGreaterThan(0);
  bytes[at + needle.length - 1] ^= 0x01; // "7" becomes "6": still valid msgpack, another value
  raw.putSync(position, bytes);
  env.close();
}

const verifyIn = (dir: string, options: VerifyOptions = {}) => verifyDir(dir, { pageSize: 10, ...options });

describe("audit verify (lmdb)", () => {
  it("a clean log verifies: every event hashed, every checkpoint matches", async () => {
    const { dir, log } = await writeLog();
    const report = await verifyIn(dir);
    expect(report).toMatchObject({ ok: true, events: 60, hashed: 60, breaks: 0, unhashed: { count: 0 } });
    // Start, 16, 32, 48 and the head.
    expect(report.checkpoints).toBe(4);
    expect(report.chain!.position).toBe(log.at(-1)!.position.toString());
  });

  it("remembers a few streams at a time: a forgotten stream's last hash is read back, and a change is still found there", async () => {
    const { dir, log } = await writeLog();
    const store = await LmdbEventStore.open(dir);
    try {
      // 4 streams in turn, 2 remembered: every stream is forgotten before it shows up again.
      expect(await verifyLog(store, { pageSize: 10, streamCache: 2 })).toMatchObject({ ok: true, events: 60, hashed: 60, breaks: 0 });
    } finally {
      await store.close();
    }
    const victim = log[41]!;
    changeOneByte(dir, Number(victim.position), `event number ${(victim.data as { i: number }).i}`);
    const again = await LmdbEventStore.open(dir);
    try {
      const report = await verifyLog(again, { pageSize: 10, streamCache: 2 });
      expect(report.firstBreaks.map((b) => b.position)).toEqual([victim.position.toString()]);
    } finally {
      await again.close();
    }
  });

  it("--after P --anchor H: the kept value is checked, even when nothing was appended since", async () => {
    const { dir } = await writeLog();
    const store = await LmdbEventStore.open(dir);
    try {
      const { chain } = await verifyLog(store);
      const wrong = chain!.hash.replace(/^./, (c) => (c === "0" ? "1" : "0"));
      const after = BigInt(chain!.position);
      // The head is inside a segment (checkpoints every 16): the walk starts at the segment's
      // checkpoint and compares the anchor, then the stored head, at P.
      expect(after % 16n).not.toBe(0n);
      expect(await verifyLog(store, { after, anchor: chain!.hash })).toMatchObject({ ok: true, events: Number(after % 16n), checkpoints: 2 });
      expect(await verifyLog(store, { after, anchor: wrong })).toMatchObject({ ok: false, breaks: 1, firstBreaks: [{ position: chain!.position }] });
      // From a checkpoint's position (48) with a wrong value: found there, and the rest walks on.
      expect(await verifyLog(store, { after: 48n, anchor: wrong })).toMatchObject({ ok: false, breaks: 1, firstBreaks: [{ position: "48" }] });
      // From inside a segment (40): found at 40, the walk having started at 32.
      expect(await verifyLog(store, { after: 40n, anchor: wrong })).toMatchObject({ ok: false, breaks: 1, firstBreaks: [{ position: "40" }] });
      expect(await verifyLog(store, { after: 40n, anchor: (await verifyLog(store, { until: 40n })).chain!.hash })).toMatchObject({ ok: true });
    } finally {
      await store.close();
    }
  });

  it("one byte changed in one event's data is found at exactly that event", async () => {
    const { dir, log } = await writeLog();
    const victim = log[37]!;
    changeOneByte(dir, Number(victim.position), `event number ${(victim.data as { i: number }).i}`);
    const report = await verifyIn(dir);
    expect(report.ok).toBe(false);
    expect(report.breaks).toBe(1);
    expect(report.firstBreaks[0]).toMatchObject({ position: victim.position.toString(), stream: victim.stream, revision: victim.revision, eventId: victim.id });
    expect(report.firstBreaks[0]!.reason).toMatch(/differs from the hash of its content/);
  });

  it("one byte changed in an event's metadata or in its stored hash is found at that event", async () => {
    for (const needle of ["admin", "hash"]) {
      const { dir, log } = await writeLog();
      const victim = log[12]!;
      const target = needle === "admin" ? "admin" : victim.hash!.slice(0, 20);
      changeOneByte(dir, Number(victim.position), target);
      const report = await verifyIn(dir);
      expect(report.firstBreaks.map((b) => b.position), needle).toEqual([victim.position.toString()]);
    }
  });

  it("an event removed from the log is found: by its stream's next event, or by the global chain at a stream's end", async () => {
    const { dir, log } = await writeLog();
    const byStream = (s: string) => log.filter((e) => e.stream === s);
    const middle = byStream("counter-1")[3]!;
    const lasts = ["counter-0", "counter-2", "counter-3"].map((st) => byStream(st).at(-1)!);
    const last = lasts.reduce((a, b) => (a.position < b.position ? a : b));
    expect(last.position).toBeLessThan(log.at(-1)!.position);
    const env = open({ path: dir, maxDbs: 8 });
    const raw = env.openDB<Buffer, number>({ name: "log", encoding: "binary" });
    raw.removeSync(Number(middle.position));
    raw.removeSync(Number(last.position));
    env.close();
    const report = await verifyIn(dir);
    const next = byStream("counter-1")[4]!;
    expect(report.firstBreaks[0]).toMatchObject({ position: next.position.toString(), stream: "counter-1", reason: expect.stringMatching(/revisions 3..3 of the stream are missing/) });
    // The stream's last event has no successor: the global chain's next checkpoint differs.
    expect(report.firstBreaks.some((b) => /global chain differs at checkpoint/.test(b.reason) && BigInt(b.position) >= last.position)).toBe(true);
  });

  it("a log written before the chain existed: its events count as unhashed, the chain starts after them", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cyborg-es-legacy-"));
    dirs.push(dir);
    writeLegacyLog(dir, 10);
    const store = await LmdbEventStore.open(dir, { checkpointInterval: 4 });
    await store.append("legacy-0", [ev(100), ev(101)], 4);
    await store.append("fresh", [ev(102)], "no_stream");
    const legacy = await store.readStream("legacy-0");
    expect(legacy.slice(0, 5).every((e) => e.hash === undefined)).toBe(true);
    expect(legacy.slice(5).every((e) => e.hash !== undefined)).toBe(true);
    expect((await store.readCheckpoints())[0]).toEqual({ position: 10n, hash: "0".repeat(64), version: 2 });
    const report = await verifyLog(store);
    expect(report).toMatchObject({ ok: true, events: 13, hashed: 3, unhashed: { count: 10, first: "1", last: "10" } });
    await store.close();

    // A legacy event is not protected by the chain (docs/audit.md: seal it by archiving the export).
    changeOneByte(dir, 3, "event number 2");
    expect((await verifyIn(dir)).ok).toBe(true);
  });
});

describe("audit verify after archiving and trimming", () => {
  it("walks the archive, then the store: the chains go on from the archived hashes", async () => {
    const { dir } = await writeLog();
    const archive = join(dir, "archive.ndjson");
    let store = await LmdbEventStore.open(dir);
    const out = createWriteStream(archive);
    await exportLog(store, out, { until: 30n });
    out.end();
    await finished(out);
    await store.close();
    // Trim: the events up to 30 leave the log (the embedded store has no trim: done by hand here).
    const env = open({ path: dir, maxDbs: 8 });
    const raw = env.openDB<Buffer, number>({ name: "log", encoding: "binary" });
    for (let p = 1; p <= 30; p++) raw.removeSync(p);
    env.close();

    store = await LmdbEventStore.open(dir);
    const withArchive = await verifyLog(store, { prefix: readExport(createReadStream(archive)) });
    expect(withArchive).toMatchObject({ ok: true, events: 60, hashed: 60 });
    const without = await verifyLog(store);
    expect(without.ok).toBe(false);
    expect(without.firstBreaks[0]!.reason).toMatch(/of the stream (is|are) missing/);
    await store.close();
  });
});

describe("audit verify in ranges (all cores)", () => {
  it("cuts the log at checkpoints into ranges of about equal length", () => {
    const cps = [0n, 16n, 32n, 48n, 64n].map((position) => ({ position, hash: `h${position}`, version: 2 as const }));
    expect(split(cps, undefined, undefined, 70n, 3)).toEqual([
      { after: undefined, anchor: undefined, until: 16n },
      { after: 16n, anchor: "h16", until: 48n },
      { after: 48n, anchor: "h48", until: 70n },
    ]);
    expect(split(cps, 40n, "a40", 70n, 2)).toEqual([
      { after: 40n, anchor: "a40", until: 48n },
      { after: 48n, anchor: "h48", until: 70n },
    ]);
    expect(split([], undefined, undefined, 70n, 4)).toEqual([{ after: undefined, anchor: undefined, until: 70n }]);
  });

  // Worker threads run the compiled worker: checked when the build is there and newer than the sources (CI builds first).
  const built = new URL("../../dist/src/audit/verify-parallel.js", import.meta.url);
  const fresh = (() => {
    try {
      const sources = ["verify-parallel.ts", "verify-walker.ts", "verify-streams.ts", "verify.ts", "verify-worker.ts"].map((f) => statSync(new URL(`../../src/audit/${f}`, import.meta.url)).mtimeMs);
      return statSync(built).mtimeMs >= Math.max(...sources);
    } catch {
      return false;
    }
  })();
  it.runIf(fresh)("in worker threads (the compiled build) too", async () => {
    const { verifyLmdbParallel: inThreads } = (await import(built.href)) as typeof import("../../src/audit/verify-parallel.js");
    const { dir, log } = await writeLog(8);
    changeOneByte(dir, Number(log[9]!.position), `event number ${(log[9]!.data as { i: number }).i}`);
    const threads = await inThreads(dir, { workers: 2 });
    expect(threads).toEqual(await verifyIn(dir));
    expect(threads.firstBreaks.map((b) => b.position)).toEqual([log[9]!.position.toString()]);
  });

  it("gives the report verifying in one pass gives: clean, and with one byte changed", async () => {
    const { dir, log } = await writeLog(8);
    const one = await verifyIn(dir);
    expect(await verifyLmdbParallel(dir, { workers: 3 })).toEqual(one);
    changeOneByte(dir, Number(log[44]!.position), `event number ${(log[44]!.data as { i: number }).i}`);
    const broken = await verifyLmdbParallel(dir, { workers: 3 });
    expect(broken).toEqual(await verifyIn(dir));
    expect(broken.firstBreaks.map((b) => b.position)).toEqual([log[44]!.position.toString()]);
  });
});

describe("audit verify (memory)", () => {
  it("an event whose hash was stripped after the chain began is a break", async () => {
    const store = new MemoryEventStore({ checkpointInterval: 5 });
    for (let i = 0; i < 12; i++) await store.append(`s-${i % 3}`, [ev(i)], "any");
    const [victim] = await store.readAll({ after: 6n, maxCount: 1 });
    delete victim!.hash; // the store hands out its own objects
    const report = await verifyLog(store);
    expect(report.firstBreaks[0]).toMatchObject({ position: "7", reason: expect.stringMatching(/no hash, though the chain began at position 0/) });
  });
});

/** What the store wrote before the hash chain: events, heads and ids, without hashes or a chain. */
function writeLegacyLog(dir: string, n: number): void {
  const env = open({ path: dir, maxDbs: 8 });
  const log = env.openDB({ name: "log", sharedStructuresKey: Symbol.for("structures") });
  const heads = env.openDB<[number, number[]], string>({ name: "heads" });
  const ids = env.openDB<number, string>({ name: "ids" });
  const open2: Record<string, number[]> = {};
  env.transactionSync(() => {
    for (let p = 1; p <= n; p++) {
      const stream = `legacy-${p % 2}`;
      const positions = (open2[stream] ??= []);
      const e = ev(p - 1);
      log.putSync(p, { id: e.id, stream, revision: positions.length, type: e.type, data: e.data, metadata: e.metadata, recordedAt: Date.now() });
      positions.push(p);
      heads.putSync(stream, [positions.length - 1, [...positions]]);
      ids.putSync(e.id, p);
    }
  });
  env.close();
}

/**
 * Hash chain versions (src/infra/eventstore/chain.ts): version 2 events beside version 1 events (logs
 * written before version 2, imports of their exports), in the same streams. Each verifies under
 * its own definition, a change in either is found at that event, and export -> import keeps both.
 */
import { createHash, randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { open } from "lmdb";
import { afterEach, describe, expect, it } from "vitest";
import { exportLog, importLog, readExport } from "../../src/audit/export.js";
import { verifyLog, type VerifyOptions } from "../../src/audit/verify.js";
import { verifyLmdbParallel } from "../../src/audit/verify-parallel.js";
import { GENESIS } from "../../src/infra/eventstore/chain.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { NewEvent } from "../../src/infra/eventstore/port.js";
import { verifyDir } from "./verify-dir.js";

const meta = { principal: "admin", correlationId: "c-1", causationId: "c-1", at: "2026-11-24T14:03:00.000Z" };
const ev = (i: number, chainVersion?: number): NewEvent => ({ id: randomUUID(), type: "Counted", data: { i, note: `event number ${i}` }, metadata: meta, chainVersion });
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cyborg-es-chainv-"));
  dirs.push(dir);
  return dir;
}

/** 60 events over 4 streams: the first 30 hashed as version 1 (as written before version 2), the rest as the store's current version. */
async function writeMixedLog(): Promise<string> {
  const dir = await tempDir();
  const store = await LmdbEventStore.open(dir, { checkpointInterval: 16 });
  for (let i = 0; i < 60; i++) await store.append(`counter-${i % 4}`, [ev(i, i < 30 ? 1 : undefined)], "any");
  await store.close();
  return dir;
}

/** Rewrites the record at `position` through `change` (the log's own msgpack structures). */
function rewrite(dir: string, position: number, change: (record: Record<string, unknown>) => void): void {
  const env = open({ path: dir, maxDbs: 8 });
  const log = env.openDB<Record<string, unknown>, number>({ name: "log", sharedStructuresKey: Symbol.for("structures") });
  const record = { ...log.get(position)! };
  change(record);
  log.putSync(position, record);
  env.close();
}

const verifyIn = (dir: string, options: VerifyOptions = {}) => verifyDir(dir, { pageSize: 7, ...options });

describe("hash chain versions", () => {
  it("version 2 is one SHA-256 over [stream, id, type, data, metadata, revision, previous hash]", async () => {
    const store = new MemoryEventStore();
    const [a, b] = [ev(0), ev(1)];
    await store.append("s", [a, b], "no_stream");
    const [x, y] = await store.readStream("s");
    expect(x!.chainVersion).toBe(2);
    expect(x!.hash).toBe(sha256(JSON.stringify(["s", a.id, a.type, a.data, a.metadata, 0, GENESIS])));
    expect(y!.hash).toBe(sha256(JSON.stringify(["s", b.id, b.type, b.data, b.metadata, 1, x!.hash])));
    // Version 1, as before: the link over the content's digest.
    await store.append("t", [ev(2, 1)], "no_stream");
    const [z] = await store.readStream("t");
    expect(z!.chainVersion).toBeUndefined();
    const digest = sha256(JSON.stringify(["t", z!.id, z!.type, z!.data, z!.metadata]));
    expect(z!.hash).toBe(sha256(`${GENESIS}:0:${digest}`));
    await expect(store.append("t", [ev(3, 3)], 0)).rejects.toThrow(/unknown hash chain version 3/);
  });

  it("a log of version 1 then version 2 events, in the same streams, verifies in one thread and on all cores", async () => {
    const dir = await writeMixedLog();
    const store = await LmdbEventStore.open(dir);
    const log = await store.readAll();
    await store.close();
    expect(log.slice(0, 30).every((e) => e.chainVersion === undefined)).toBe(true);
    expect(log.slice(30).every((e) => e.chainVersion === 2)).toBe(true);
    expect(await verifyIn(dir)).toMatchObject({ ok: true, events: 60, hashed: 60, breaks: 0 });
    expect(await verifyLmdbParallel(dir, { workers: 3 })).toMatchObject({ ok: true, events: 60, hashed: 60, breaks: 0 });
  });

  it("one byte changed in a version 1 or a version 2 event is found at exactly that event", async () => {
    for (const position of [13, 29, 31, 47]) {
      const dir = await writeMixedLog();
      const i = position - 1;
      rewrite(dir, position, (r) => {
        (r.data as { note: string }).note = `event number ${i + 100}`;
      });
      const report = await verifyIn(dir);
      expect(report.breaks, `position ${position}`).toBe(1);
      expect(report.firstBreaks[0]).toMatchObject({ position: String(position), stream: `counter-${i % 4}`, reason: expect.stringMatching(/differs from the hash of its content/) });
    }
  });

  it("the version is covered too: a version 2 event relabelled as version 1 (or 1 as 2) breaks at that event", async () => {
    for (const [position, relabel] of [
      [40, (r: Record<string, unknown>) => delete r.chainVersion],
      [10, (r: Record<string, unknown>) => (r.chainVersion = 2)],
    ] as const) {
      const dir = await writeMixedLog();
      rewrite(dir, position, relabel);
      const report = await verifyIn(dir);
      expect(report.firstBreaks.map((b) => b.position)).toEqual([String(position)]);
    }
  });

  it("export -> import keeps each event's version and hash: the copy verifies and its global chain ends on the same value", async () => {
    const dir = await writeMixedLog();
    const a = await LmdbEventStore.open(dir);
    const file = join(dir, "export.ndjson");
    const out = createWriteStream(file);
    await exportLog(a, out);
    out.end();
    await finished(out);
    for (const b of [await LmdbEventStore.open(await tempDir(), { checkpointInterval: 16 }), new MemoryEventStore({ checkpointInterval: 16 })]) {
      expect(await importLog(b, readExport(createReadStream(file)), { batch: 9 })).toEqual({ events: 60 });
      const strip = (es: Awaited<ReturnType<typeof a.readAll>>) => es.map((e) => [e.position, e.stream, e.revision, e.id, e.hash, e.chainVersion]);
      expect(strip(await b.readAll())).toEqual(strip(await a.readAll()));
      const report = await verifyLog(b);
      expect(report).toMatchObject({ ok: true, events: 60, hashed: 60 });
      expect(report.chain).toEqual((await verifyLog(a)).chain);
      await b.close();
    }
    await a.close();
  });
});

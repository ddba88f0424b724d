/**
 * The global chain's versions (src/infra/eventstore/chain.ts): version 2 segments in a new log, across
 * reopenings; and an lmdb log whose chain was written as version 1 (before version 2), which goes
 * on as version 2 from its head. Verify checks both, and a change on either side is found.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterEach, describe, expect, it } from "vitest";
import { verifyLog, type VerifyOptions } from "../../src/audit/verify.js";
import { verifyLmdbParallel } from "../../src/audit/verify-parallel.js";
import { GENESIS } from "../../src/infra/eventstore/chain.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import type { NewEvent, RecordedEvent } from "../../src/infra/eventstore/port.js";
import { verifyDir } from "./verify-dir.js";

const meta = { principal: "admin", correlationId: "c-1", causationId: "c-1", at: "2026-11-24T14:03:00.000Z" };
const ev = (i: number): NewEvent => ({ id: randomUUID(), type: "Counted", data: { i }, metadata: meta });
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const INTERVAL = 4;

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function appendIn(dir: string, from: number, count: number): Promise<void> {
  const store = await LmdbEventStore.open(dir, { checkpointInterval: INTERVAL });
  for (let i = from; i < from + count; i++) await store.append(`counter-${i % 3}`, [ev(i)], "any");
  await store.close();
}

async function readLog(dir: string): Promise<RecordedEvent[]> {
  const store = await LmdbEventStore.open(dir);
  try {
    return await store.readAll();
  } finally {
    await store.close();
  }
}

/** The chain's databases, raw (lmdb-layout.ts). */
function withChain<T>(dir: string, f: (checkpoints: import("lmdb").Database<string, number>, chain: import("lmdb").Database<[number, string], string>) => T): T {
  const env = open({ path: dir, maxDbs: 8 });
  try {
    return f(env.openDB<string, number>({ name: "checkpoints" }), env.openDB<[number, string], string>({ name: "chain" }));
  } finally {
    env.close();
  }
}

/** Rewrites the chain as the version before 2 wrote it: one SHA-256 an event, checkpoints every interval, no version 2 mark. */
async function rewriteAsVersion1(dir: string): Promise<void> {
  const log = await readLog(dir);
  withChain(dir, (checkpoints, chain) => {
    checkpoints.clearSync();
    checkpoints.putSync(0, GENESIS);
    let value = GENESIS;
    for (const e of log) {
      value = sha256(`${value}:${e.position}:${e.hash!}`);
      if (Number(e.position) % INTERVAL === 0) checkpoints.putSync(Number(e.position), value);
    }
    chain.putSync("head", [Number(log.at(-1)!.position), value]);
    chain.removeSync("v2");
  });
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cyborg-es-global-"));
  dirs.push(dir);
  return dir;
}

const verifyIn = (dir: string, options: VerifyOptions = {}) => verifyDir(dir, { pageSize: 3, ...options });

describe("the global chain, version 2", () => {
  it("each segment is one SHA-256 of its checkpoint's value and `:position:hash` of its events, across reopenings", async () => {
    const dir = await tempDir();
    // Reopened mid-segment twice: the writer reads the open segment back.
    await appendIn(dir, 0, 6);
    await appendIn(dir, 6, 5);
    await appendIn(dir, 11, 3);
    const log = await readLog(dir);
    const expected: Array<[bigint, string]> = [[0n, GENESIS]];
    let text = GENESIS;
    for (const e of log) {
      text += `:${e.position}:${e.hash!}`;
      if (Number(e.position) % INTERVAL === 0 || e === log.at(-1)) {
        expected.push([e.position, sha256(text)]);
        text = sha256(text);
      }
    }
    const store = await LmdbEventStore.open(dir);
    const checkpoints = await store.readCheckpoints();
    await store.close();
    expect(checkpoints.map((c) => [c.position, c.hash])).toEqual(expected);
    expect(checkpoints.every((c) => c.version === 2)).toBe(true);
    expect(checkpoints.filter((c) => c.head).map((c) => c.position)).toEqual([14n]);
    expect(await verifyIn(dir)).toMatchObject({ ok: true, events: 14, checkpoints: 4, chain: { position: "14", hash: expected.at(-1)![1] } });
  });
});

describe("a log whose global chain was written as version 1", () => {
  it("verifies as it was, goes on as version 2 from its head, and a change on either side is found", async () => {
    const dir = await tempDir();
    await appendIn(dir, 0, 10);
    await rewriteAsVersion1(dir);
    const before = await verifyIn(dir);
    expect(before).toMatchObject({ ok: true, events: 10, checkpoints: 3 });

    // The next append starts version 2 at the head (10), with a checkpoint there.
    await appendIn(dir, 10, 9);
    const store = await LmdbEventStore.open(dir);
    const checkpoints = await store.readCheckpoints();
    await store.close();
    expect(checkpoints.map((c) => [c.position, c.version, c.head ?? false])).toEqual([
      [0n, 1, false],
      [4n, 1, false],
      [8n, 1, false],
      [10n, 2, false],
      [12n, 2, false],
      [16n, 2, false],
      [19n, 2, true],
    ]);
    expect(checkpoints[3]!.hash).toBe(before.chain!.hash);
    const log = await readLog(dir);
    let text = before.chain!.hash;
    for (const e of log.slice(10, 12)) text += `:${e.position}:${e.hash!}`;
    expect(checkpoints[4]!.hash).toBe(sha256(text));

    const after = await verifyIn(dir);
    expect(after).toMatchObject({ ok: true, events: 19, checkpoints: 6 });
    expect(await verifyLmdbParallel(dir, { workers: 3 })).toMatchObject({ ok: true, events: 19, checkpoints: 6, chain: after.chain });
    // The anchor kept before the switch still checks what came since.
    expect(await verifyIn(dir, { after: 10n, anchor: before.chain!.hash })).toMatchObject({ ok: true, events: 9 });

    // A version 1 checkpoint changed, then the switch's: each found at that checkpoint.
    for (const position of [8, 10]) {
      const stored = withChain(dir, (cps) => cps.get(position)!);
      withChain(dir, (cps) => cps.putSync(position, stored.replace(/^./, (c) => (c === "0" ? "1" : "0"))));
      const report = await verifyIn(dir);
      expect(report.firstBreaks.map((b) => b.position), `checkpoint ${position}`).toEqual([String(position)]);
      withChain(dir, (cps) => cps.putSync(position, stored));
    }
    expect((await verifyIn(dir)).ok).toBe(true);
  });
});

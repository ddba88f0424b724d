/**
 * The audit index on disk beside the embedded log (AUDIT_INDEX=disk, the embedded default):
 * openDiskIndex keeps it only when it is the model of this log, and the service uses it across a
 * restart without replaying it, and rebuilds it when the log was replaced.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { openDiskIndex } from "../../src/infra/readstore/disk-index.js";
import { LmdbReadStore } from "../../src/infra/readstore/lmdb.js";
import { startTestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { hostDevices } from "./scenario.js";

const meta = { principal: "admin", correlationId: "c", causationId: "c", at: "2026-11-25T12:00:00.000Z" };
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "cyborg-es-disk-index-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** openDiskIndex, which must get the directory (no other holder in these tests). */
async function open(dir: string, events: MemoryEventStore): Promise<LmdbReadStore> {
  const store = await openDiskIndex(dir, ["audit"], events);
  expect(store).toBeDefined();
  return store!;
}

async function logOf(count: number): Promise<MemoryEventStore> {
  const events = new MemoryEventStore();
  for (let i = 0; i < count; i++) await events.append("s", [{ id: randomUUID(), type: "T", data: { i }, metadata: meta }], "any");
  return events;
}

/** Opens the index for `events`, gives it a checkpoint, closes it: a model as a projector leaves it. */
async function indexAt(dir: string, events: MemoryEventStore, checkpoint: bigint): Promise<void> {
  const store = await open(dir, events);
  await store.applyBatch("audit", [{ op: "zadd", key: "{audit}:request:c", member: "1 0 s", score: 1 }], checkpoint);
  await store.close();
}

async function reopened(dir: string, events: MemoryEventStore): Promise<bigint | undefined> {
  const store = await open(dir, events);
  try {
    return await store.getCheckpoint("audit");
  } finally {
    await store.close();
  }
}

describe("openDiskIndex", () => {
  it("keeps the model of the same log, and remembers the log's first event", async () => {
    const dir = tempDir();
    const events = await logOf(3);
    await indexAt(dir, events, 3n);
    expect(JSON.parse(readFileSync(join(dir, "log-identity.json"), "utf8"))).toEqual({ firstEventId: (await events.readAll({ maxCount: 1 }))[0]!.id });
    expect(await reopened(dir, events)).toBe(3n);
  });

  it("opened on an empty log, learns the log's first event before its first write, and keeps the model at the next start", async () => {
    const dir = tempDir();
    const events = new MemoryEventStore();
    const store = await open(dir, events);
    expect(existsSync(join(dir, "log-identity.json"))).toBe(false);
    await events.append("s", [{ id: "first-event", type: "T", data: {}, metadata: meta }], "no_stream");
    await store.applyBatch("audit", [{ op: "zadd", key: "{audit}:request:c", member: "1 0 s", score: 1 }], 1n);
    await store.close();
    expect(JSON.parse(readFileSync(join(dir, "log-identity.json"), "utf8"))).toEqual({ firstEventId: "first-event" });
    expect(await reopened(dir, events)).toBe(1n);
  });

  it("drops the model of another log, of a log that ends before its checkpoint, of an empty log", async () => {
    const dir = tempDir();
    await indexAt(dir, await logOf(3), 3n);
    expect(await reopened(dir, await logOf(3))).toBeUndefined(); // another first event

    const short = await logOf(5);
    await indexAt(dir, short, 5n);
    const truncated = new MemoryEventStore();
    for (const e of (await short.readAll()).slice(0, 4)) await truncated.append(e.stream, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }], "any");
    expect(await reopened(dir, truncated)).toBeUndefined();

    await indexAt(dir, await logOf(1), 1n);
    expect(await reopened(dir, new MemoryEventStore())).toBeUndefined();
  });

  it("fails closed: a model whose log identity is missing or unreadable is dropped", async () => {
    const dir = tempDir();
    const events = await logOf(2);
    await indexAt(dir, events, 2n);
    rmSync(join(dir, "log-identity.json"));
    expect(await reopened(dir, events)).toBeUndefined();
    await indexAt(dir, events, 2n);
    writeFileSync(join(dir, "log-identity.json"), "{not json");
    expect(await reopened(dir, events)).toBeUndefined();
    expect(existsSync(join(dir, "log-identity.json.tmp"))).toBe(false);
  });
});

describe("openDiskIndex: one process at a time", () => {
  it("a second opening while the first is open gets none; after the first closes, it does", async () => {
    const dir = tempDir();
    const events = await logOf(1);
    const first = await open(dir, events);
    expect(await openDiskIndex(dir, ["audit"], events)).toBeUndefined();
    await first.close();
    expect(existsSync(join(dir, "owner.json"))).toBe(false);
    await (await open(dir, events)).close();
  });

  it("replaces a holder whose process is gone, or that ran before the machine restarted, but not a live one", async () => {
    const dir = tempDir();
    const events = await logOf(1);
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid!; // exited: its pid is free
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    writeFileSync(join(dir, "owner.json"), JSON.stringify({ pid: gone, bootId }));
    await (await open(dir, events)).close();
    writeFileSync(join(dir, "owner.json"), JSON.stringify({ pid: process.ppid, bootId: "another boot" }));
    await (await open(dir, events)).close();
    writeFileSync(join(dir, "owner.json"), JSON.stringify({ pid: process.ppid, bootId }));
    expect(await openDiskIndex(dir, ["audit"], events)).toBeUndefined();
  });
});

describe("the service's audit index on disk", () => {
  const HISTORY = `query($uuid: ID!) { history(uuid: $uuid, first: 100) { totalCount nodes { type } } }`;

  const start = (dataDir: string, env: Record<string, string> = {}) => startTestService({ dataDir, env });

  it("answers history after a restart from the index it kept, without replaying it; rebuilds it for a replaced log", async () => {
    const dataDir = tempDir();
    let t = await start(dataDir);
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices() });
    const device = (await t.ok("admin", `{ devices(filter: { hostname: "compute1" }) { nodes { uuid } } }`)).devices.nodes[0].uuid as string;
    await t.service.projector!.caughtUp();
    const before = (await t.ok("admin", HISTORY, { uuid: device })).history;
    expect(before.totalCount).toBeGreaterThan(0);
    const head = await t.service.store.headPosition();
    await t.close();
    expect(existsSync(join(dataDir, "audit-index"))).toBe(true);

    // Restart: the index is that of this log, at its head; the projector writes nothing to it.
    const applied = vi.spyOn(LmdbReadStore.prototype, "applyBatch");
    const dropped = vi.spyOn(LmdbReadStore.prototype, "drop");
    t = await start(dataDir);
    expect((await t.ok("admin", HISTORY, { uuid: device })).history).toEqual(before);
    expect(dropped).not.toHaveBeenCalled();
    expect(applied.mock.calls.filter(([p]) => p === "audit")).toEqual([]);
    expect(await t.service.store.headPosition()).toBe(head);
    // It goes on from there: a new report of the host names the device again.
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices({ modelA: "other" }) });
    await t.service.projector!.caughtUp();
    expect((await t.ok("admin", HISTORY, { uuid: device })).history.totalCount).toBeGreaterThan(before.totalCount);
    await t.close();

    // The log replaced (its folder removed): the old index is dropped, not served.
    rmSync(join(dataDir, "events"), { recursive: true });
    t = await start(dataDir);
    expect(dropped).toHaveBeenCalledTimes(1);
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-2", groups: [{ "resources:FPGA": "1" }] } });
    await t.service.projector!.caughtUp();
    expect((await t.ok("admin", HISTORY, { uuid: device })).history.totalCount).toBe(0);
    await t.close();
  }, 60_000);

  it("a second server on the same DATA_DIR keeps its audit index in memory, and answers history all the same", async () => {
    const dataDir = tempDir();
    const a = await start(dataDir);
    await a.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
    const opened = vi.spyOn(LmdbReadStore, "open");
    const b = await start(dataDir);
    try {
      expect(opened).not.toHaveBeenCalled();
      const uuid = (await b.ok("admin", `{ deviceProfile(name: "fpga-1") { uuid } }`)).deviceProfile.uuid as string;
      expect((await b.ok("admin", HISTORY, { uuid })).history.totalCount).toBeGreaterThan(0);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it("a server that cannot open the index does not start, and says what to do", async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, "audit-index"), "a file where the index's directory should be");
    await expect(start(dataDir)).rejects.toThrow(/cannot open the audit index in .*audit-index \(.*\); AUDIT_INDEX=memory keeps it in memory instead/);
  });

  it("AUDIT_INDEX=memory keeps it in the process: nothing is written beside the log", async () => {
    const dataDir = tempDir();
    const t = await start(dataDir, { AUDIT_INDEX: "memory" });
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
    await t.close();
    expect(existsSync(join(dataDir, "audit-index"))).toBe(false);
  });
});

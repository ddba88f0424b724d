/**
 * Snapshots of the in-memory read models (src/infra/readstore/memory-snapshots.ts): a restart
 * loads them and the projector reads only the log after them; a snapshot that is refused (torn,
 * corrupt, other code) or is another log's is logged and that model rebuilt from the log.
 */
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { projections } from "../../projections/index.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { ReadModelSnapshots } from "../../src/infra/readstore/memory-snapshots.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { capturingLogger } from "../support/log-lines.js";
import { append, arqCreated, gpuHost, given } from "../projections/support.js";
import { dumpAll, mixedLog } from "./support.js";

const names = projections.map((p) => p.name);
const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "cyborg-es-model-snapshots-"));
  dirs.push(d);
  return d;
};

function snapshotsOf(store: MemoryReadStore, dir: string, layout = "v1") {
  const captured = capturingLogger();
  const snapshots = new ReadModelSnapshots({ store, dir, projections: names.map((name) => ({ name, layout })), intervalMs: 0, log: captured.log });
  return { snapshots, ...captured };
}

/** Models built from a mixed log, written to `dir`; the log and what the models held. */
async function written(dir: string) {
  const store = new MemoryReadStore();
  const { es } = await given(mixedLog(), store);
  const w = snapshotsOf(store, dir);
  await w.snapshots.load();
  await w.snapshots.writeMoved();
  await w.snapshots.close();
  return { es, dump: await dumpAll(store, names), stamps: await store.getStamps(names), lines: w.lines };
}

/** A projector on `store` over `es`, started and stopped; the store's drops while it ran. */
async function project(es: MemoryEventStore, store: MemoryReadStore, log = capturingLogger().log) {
  const dropped = vi.spyOn(store, "drop");
  const projector = new Projector({ events: es, store, projections, log });
  await projector.start();
  await projector.stop();
  return dropped.mock.calls.map(([p]) => p);
}

describe("read-model snapshots", () => {
  it("a restart loads every model as it was, checkpoint and origin included, and the projector replays nothing", async () => {
    const dir = tempDir();
    const before = await written(dir);
    const store = new MemoryReadStore();
    const { snapshots } = snapshotsOf(store, dir);
    expect((await snapshots.load()).sort()).toEqual([...names].sort());
    expect(await dumpAll(store, names)).toEqual(before.dump);
    expect(await store.getStamps(names)).toEqual(before.stamps);
    expect(await store.serving(names)).toEqual(names.map(() => false)); // marks are the running projector's, not the file's
    const applied = vi.spyOn(store, "applyBatch");
    expect(await project(before.es, store)).toEqual([]);
    expect(applied).not.toHaveBeenCalled();
    await snapshots.close();
  });

  it("takes every loaded key out of the files' bytes in the background when asked, and says so; the models read the same", async () => {
    const dir = tempDir();
    const before = await written(dir);
    const store = new MemoryReadStore();
    const { snapshots, said } = snapshotsOf(store, dir);
    await snapshots.load();
    snapshots.settleLoaded();
    await vi.waitFor(() => expect(said("read models loaded from snapshots: every key taken out of the files' bytes, which are freed")).toHaveLength(1));
    const [line] = said("read models loaded from snapshots: every key taken out of the files' bytes, which are freed");
    expect(line!.keys).toBeGreaterThan(0);
    expect(await store.settleLoaded({ pause: async () => undefined })).toBe(0);
    expect(await dumpAll(store, names)).toEqual(before.dump);
    await snapshots.close();
  });

  it("the projector reads on from the snapshot's checkpoint: the models equal those of a full rebuild", async () => {
    const dir = tempDir();
    const { es } = await written(dir);
    await append(es, [...gpuHost("late-host", "9"), arqCreated("arq-late")]);
    const store = new MemoryReadStore();
    const { snapshots } = snapshotsOf(store, dir);
    await snapshots.load();
    expect(await project(es, store)).toEqual([]);
    const fresh = new MemoryReadStore();
    await new Projector({ events: es, store: fresh, projections }).rebuild();
    expect(await dumpAll(store, names)).toEqual(await dumpAll(fresh, names));
    await snapshots.close();
  });

  it("writes only the models whose checkpoint moved since their last snapshot", async () => {
    const dir = tempDir();
    const store = new MemoryReadStore();
    const { es } = await given(mixedLog(), store);
    const w = snapshotsOf(store, dir);
    await w.snapshots.load();
    await w.snapshots.writeMoved();
    expect(w.said("read-model snapshot written")).toHaveLength(names.length);
    await w.snapshots.writeMoved();
    expect(w.said("read-model snapshot written")).toHaveLength(names.length);
    await append(es, [arqCreated("arq-more")]);
    const projector = new Projector({ events: es, store, projections });
    await projector.start();
    await projector.stop();
    await w.snapshots.close();
    // The projector saved every checkpoint at stop (the others moved without writes): each is written at the new head.
    const head = (await es.headPosition())!.toString();
    expect(w.said("read-model snapshot written").slice(names.length).map((l) => [l.projection, l.checkpoint])).toEqual(names.map((n) => [n, head]));
  });

  it("at the interval, rewrites a model only once the writes since its last snapshot reach a tenth of its keys, or it is 30 intervals old; a stop writes what moved", async () => {
    const store = new MemoryReadStore();
    const origin = (n: number) => ({ log: "log-1", event: `event-${n}` });
    const puts = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ op: "put" as const, key: `{arqs}:arq:${from + i}`, fields: { n: i } }));
    await store.applyBatch("arqs", puts(0, 40), 1n, undefined, origin(1));
    const w = capturingLogger();
    const snapshots = new ReadModelSnapshots({ store, dir: tempDir(), projections: [{ name: "arqs", layout: "v1" }], intervalMs: 60_000, log: w.log });
    await snapshots.load();
    const written = () => w.said("read-model snapshot written").map((l) => l.checkpoint);
    await snapshots.writeDue();
    expect(written()).toEqual(["1"]); // never written: written at once
    await store.applyBatch("arqs", puts(100, 3), 2n, undefined, origin(2));
    await snapshots.writeDue();
    expect(written()).toEqual(["1"]); // 3 writes of 40 keys: not yet
    await store.applyBatch("arqs", puts(200, 1), 3n, undefined, origin(3));
    await snapshots.writeDue();
    expect(written()).toEqual(["1", "3"]); // 4 writes: a tenth of 40
    await store.applyBatch("arqs", puts(300, 1), 4n, undefined, origin(4));
    await snapshots.writeDue();
    expect(written()).toEqual(["1", "3"]);
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 30 * 60_000);
    await snapshots.writeDue();
    expect(written()).toEqual(["1", "3", "4"]); // 30 intervals old, and it moved
    await store.applyBatch("arqs", puts(400, 1), 5n, undefined, origin(5));
    await snapshots.close();
    expect(written()).toEqual(["1", "3", "4", "5"]);
  });

  it("refuses a torn, a corrupt, and another build's snapshot with a log line; those models are rebuilt from the log", async () => {
    const dir = tempDir();
    const before = await written(dir);
    truncateSync(join(dir, "arqs.snapshot"), 100);
    const tree = readFileSync(join(dir, "device-tree.snapshot"));
    tree[Math.floor(tree.length / 2)] ^= 1;
    writeFileSync(join(dir, "device-tree.snapshot"), tree);
    const store = new MemoryReadStore();
    const r = snapshotsOf(store, dir);
    const loaded = await r.snapshots.load();
    expect(loaded).not.toContain("arqs");
    expect(loaded).not.toContain("device-tree");
    const refused = r.lines.filter((l) => /read-model snapshot is refused/.test(l.msg));
    expect(refused.map((l) => [l.projection, l.reason])).toEqual([
      ["device-tree", "its checksum does not match its content (a corrupt file)"],
      ["arqs", expect.stringMatching(/^it is torn/)],
    ]);
    await project(before.es, store);
    expect(await dumpAll(store, names)).toEqual(before.dump);
    await r.snapshots.close();

    const other = snapshotsOf(new MemoryReadStore(), dir, "v2");
    expect(await other.snapshots.load()).toEqual([]);
    expect(other.lines.filter((l) => /read-model snapshot is refused/.test(l.msg)).map((l) => l.reason)).toEqual(names.map(() => expect.stringMatching(/written by a build whose .* code differs/)));
    await other.snapshots.close();
  });

  it("a snapshot of another log is loaded, then found not this log's by the projector: logged, not served, rebuilt", async () => {
    const dir = tempDir();
    await written(dir);
    const { es: otherLog, store: expected } = await given(mixedLog(2, 2));
    const store = new MemoryReadStore();
    const { snapshots } = snapshotsOf(store, dir);
    await snapshots.load();
    const p = capturingLogger();
    const dropped = await project(otherLog, store, p.log);
    expect(dropped.sort()).toEqual([...names].sort());
    expect(p.lines.filter((l) => /read model in the store is not this log's/.test(l.msg)).map((l) => l.projection).sort()).toEqual([...names].sort());
    expect(await dumpAll(store, names)).toEqual(await dumpAll(expected, names));
    await snapshots.close();
  });

  it("paces the writes made at the interval, not those made at close; a close hurries one under way", async () => {
    const dir = tempDir();
    const store = new MemoryReadStore();
    await given(mixedLog(), store);
    const made: Array<{ pauses: number; hurried: boolean }> = [];
    const pacing = () => {
      const p = { pauses: 0, hurried: false, pause: async () => void p.pauses++, hurry: () => void (p.hurried = true) };
      made.push(p);
      return p;
    };
    const w = new ReadModelSnapshots({ store, dir, projections: names.map((name) => ({ name, layout: "v1" })), intervalMs: 0, log: capturingLogger().log, pacing });
    await w.load();
    await w.writeDue();
    expect(made).toHaveLength(1);
    // One pause at least per model written (each file's last write).
    expect(made[0]!.pauses).toBeGreaterThanOrEqual(names.length);
    await w.writeMoved();
    expect(made).toHaveLength(1);
    await store.applyBatch("arqs", [{ op: "put", key: "{arqs}:arq:paced", fields: { n: 1 } }], (await store.getCheckpoint("arqs"))! + 1n);
    const underWay = w.writeDue();
    await w.close();
    await underWay;
    expect(made).toHaveLength(2);
    expect(made[1]!.hurried).toBe(true);
  });

  it("one process at a time: a second holder of the directory loads and writes nothing", async () => {
    const dir = tempDir();
    await written(dir);
    const first = snapshotsOf(new MemoryReadStore(), dir);
    expect(await first.snapshots.load()).toHaveLength(names.length);
    const second = snapshotsOf(new MemoryReadStore(), dir);
    expect(await second.snapshots.load()).toEqual([]);
    expect(second.lines.some((l) => /another process writes read-model snapshots/.test(l.msg))).toBe(true);
    await second.snapshots.close();
    await first.snapshots.close();
    expect(await snapshotsOf(new MemoryReadStore(), dir).snapshots.load()).toHaveLength(names.length);
  });
});

describe("hashes loaded from a snapshot", () => {
  // Keys with a quote, a backslash and non-ASCII text: the key is read as a JSON string.
  const keys = ["{arqs}:arq:plain", '{arqs}:arq:with "quote"', "{arqs}:arq:back\\slash", "{arqs}:arq:ünï"];

  async function savedAndLoaded(dir: string) {
    const store = new MemoryReadStore();
    const writes = keys.map((key, i) => ({ op: "put" as const, key, fields: { n: i, name: key, nested: { list: [i, "x"] } } }));
    await store.applyBatch("arqs", writes, 5n, undefined, { log: "log-1", event: "event-5" });
    const w = new ReadModelSnapshots({ store, dir, projections: [{ name: "arqs", layout: "v1" }], intervalMs: 0, log: capturingLogger().log });
    await w.load();
    await w.writeMoved();
    await w.close();
    const loaded = new MemoryReadStore();
    const r = new ReadModelSnapshots({ store: loaded, dir, projections: [{ name: "arqs", layout: "v1" }], intervalMs: 0, log: capturingLogger().log });
    expect(await r.load()).toEqual(["arqs"]);
    return { store, loaded, r };
  }

  it("read back equal, whatever their keys; written again unread, the file is the same", async () => {
    const dir = tempDir();
    const { store, loaded, r } = await savedAndLoaded(dir);
    const file = join(dir, "arqs.snapshot");
    const first = readFileSync(file, "utf8");
    // Nothing read yet: the hashes go back to the file as the text they came from.
    await loaded.applyBatch("arqs", [{ op: "zadd", key: "{arqs}:order", member: "m", score: 1 }], 6n, undefined, { log: "log-1", event: "event-6" });
    await r.writeMoved();
    const again = readFileSync(file, "utf8").split("\n");
    const hashLines = (text: string[]) => text.filter((l) => l.startsWith('["h"'));
    expect(hashLines(again)).toEqual(hashLines(first.split("\n")));
    expect(await loaded.getDocs(keys)).toEqual(await store.getDocs(keys));
  });

  it("are parsed on first use: written over, unset and deleted as any other", async () => {
    const { loaded } = await savedAndLoaded(tempDir());
    await loaded.applyBatch(
      "arqs",
      [
        { op: "put", key: keys[0]!, fields: { n: 100 } },
        { op: "unset", key: keys[1]!, fields: ["nested"] },
        { op: "del", key: keys[2]! },
      ],
      6n,
    );
    const [a, b, c, d] = await loaded.getDocs(keys);
    expect(a).toEqual({ n: 100, name: keys[0], nested: { list: [0, "x"] } });
    expect(b).toEqual({ n: 1, name: keys[1] });
    expect(c).toBeNull();
    expect(d).toEqual({ n: 3, name: keys[3], nested: { list: [3, "x"] } });
  });
});

describe("sorted sets loaded from a snapshot", () => {
  const order = "{arqs}:order";
  const odd = '{arqs}:by-name:"quoted"\\ü';

  async function savedAndLoaded(dir: string) {
    const store = new MemoryReadStore();
    const writes = [
      ...Array.from({ length: 40 }, (_, i) => ({ op: "zadd" as const, key: order, member: `arq-${i}`, score: i % 7 })),
      { op: "zadd" as const, key: odd, member: "m", score: -1.5 },
    ];
    await store.applyBatch("arqs", writes, 5n, undefined, { log: "log-1", event: "event-5" });
    const projections = [{ name: "arqs", layout: "v1" }];
    const w = new ReadModelSnapshots({ store, dir, projections, intervalMs: 0, log: capturingLogger().log });
    await w.load();
    await w.writeMoved();
    await w.close();
    const loaded = new MemoryReadStore();
    expect(await new ReadModelSnapshots({ store: loaded, dir, projections, intervalMs: 0, log: capturingLogger().log }).load()).toEqual(["arqs"]);
    return { store, loaded };
  }

  it("answer ranges and counts as before, and take adds and removals on first use", async () => {
    const { store, loaded } = await savedAndLoaded(tempDir());
    expect(await loaded.count([order, odd])).toEqual([40, 1]);
    expect(await loaded.range([order], { limit: 50 })).toEqual(await store.range([order], { limit: 50 }));
    const change = [
      { op: "zrem" as const, key: order, member: "arq-3" },
      { op: "zadd" as const, key: order, member: "arq-new", score: 2 },
      { op: "zrem" as const, key: odd, member: "m" },
    ];
    await store.applyBatch("arqs", change, 6n);
    await loaded.applyBatch("arqs", change, 6n);
    expect(await dumpAll(loaded, ["arqs"])).toEqual(await dumpAll(store, ["arqs"]));
    expect(await loaded.count([odd])).toEqual([0]);
  });
});

describe("large keys in a snapshot", () => {
  const index = "{arqs}:by-device";
  const order = "{arqs}:order";
  const N = 20_000;

  it("are read back equal (their lines written in pieces: snapshot-lines.ts)", async () => {
    const store = new MemoryReadStore();
    const fields = Object.fromEntries(Array.from({ length: N }, (_, i) => [`dev-${i}`, { arq: `arq-${i}`, n: i }]));
    const members = Array.from({ length: N }, (_, i) => ({ op: "zadd" as const, key: order, member: `arq-${i}`, score: i % 97 }));
    await store.applyBatch("arqs", [{ op: "put", key: index, fields }, ...members], 5n, undefined, { log: "log-1", event: "event-5" });
    const projections = [{ name: "arqs", layout: "v1" }];
    const dir = tempDir();
    const w = new ReadModelSnapshots({ store, dir, projections, intervalMs: 0, log: capturingLogger().log });
    await w.load();
    await w.writeMoved();
    await w.close();
    const lines = readFileSync(join(dir, "arqs.snapshot"), "utf8").split("\n");
    expect(lines.filter((l) => l.startsWith(`["h","${index}",{`))).toHaveLength(1);
    const loaded = new MemoryReadStore();
    expect(await new ReadModelSnapshots({ store: loaded, dir, projections, intervalMs: 0, log: capturingLogger().log }).load()).toEqual(["arqs"]);
    expect(await dumpAll(loaded, ["arqs"])).toEqual(await dumpAll(store, ["arqs"]));
    expect((await loaded.getDocs([index]))[0]!["dev-19999"]).toEqual({ arq: "arq-19999", n: 19999 });
    expect(await loaded.count([order])).toEqual([N]);
  });
});

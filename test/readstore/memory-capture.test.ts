/**
 * A capture of an in-memory model (src/infra/readstore/memory-capture.ts) is read while the store
 * goes on taking writes: what it reads is the model at its checkpoint, whatever was written,
 * deleted, set again or re-indexed meanwhile, and another model's keys are not part of it.
 */
import { describe, expect, it } from "vitest";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import type { Write } from "../../src/infra/readstore/port.js";
import { FieldsAtCapture, rawText, type CapturedLine, type RawJson } from "../../src/infra/readstore/memory-capture.js";

const origin = (n: number) => ({ log: "log-1", event: `event-${n}` });
const k = (part: string) => `{arqs}:${part}`;
const ix = (member: string, value: string | null): Write => ({ op: "index", index: k("by-state"), member, value, order: k("all") });

/** The lines as plain values, sorted by kind and key. */
const plain = (lines: Iterable<CapturedLine>) =>
  [...lines].map(([kind, key, content]) => [kind, key, valueOf(content)]).sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`));

function valueOf(content: CapturedLine[2]): unknown {
  if (Array.isArray(content)) return content;
  if (content instanceof FieldsAtCapture) return Object.fromEntries(content);
  return JSON.parse(typeof content === "string" ? content : rawText(content as RawJson));
}

async function seeded() {
  const store = new MemoryReadStore();
  await store.applyBatch(
    "arqs",
    [
      { op: "put", key: k("a"), fields: { n: 1 } },
      { op: "put", key: k("b"), fields: { n: 2, m: "x" } },
      { op: "put", key: k("c"), fields: { n: 3 } },
      { op: "zadd", key: k("all"), member: "a", score: 1 },
      { op: "zadd", key: k("all"), member: "b", score: 2 },
      ix("a", "bound"),
      ix("b", "initial"),
    ],
    1n,
    undefined,
    origin(1),
  );
  await store.applyBatch("device-tree", [{ op: "put", key: "{device-tree}:host:h1", fields: { x: 1 } }], 7n, undefined, origin(7));
  return store;
}

describe("a capture of an in-memory model", () => {
  it("reads the model at its checkpoint while writes change, delete, add and re-index its keys", async () => {
    const store = await seeded();
    const expected = plain(store.openCapture("arqs")!.lines());
    const capture = store.openCapture("arqs")!;
    expect(capture.checkpoint).toBe(1n);
    const lines = capture.lines();
    const first = lines.next();
    await store.applyBatch(
      "arqs",
      [
        { op: "put", key: k("a"), fields: { n: 10 } },
        { op: "del", key: k("b") },
        { op: "put", key: k("d"), fields: { n: 4 } },
        { op: "unset", key: k("c"), fields: ["n"] },
        { op: "zadd", key: k("all"), member: "d", score: 4 },
        { op: "zrem", key: k("all"), member: "a" },
        ix("a", "deleted"),
        ix("b", null),
      ],
      2n,
      undefined,
      origin(2),
    );
    // Deleted and set again while the capture walks: read once, as it was.
    await store.applyBatch("arqs", [{ op: "put", key: k("c"), fields: { n: 30 } }, { op: "put", key: k("b"), fields: { n: 20 } }], 3n, undefined, origin(3));
    const read = plain([first.value as CapturedLine, ...lines]);
    expect(read).toEqual(expected);
    expect(capture.keys).toBe(expected.length);
    expect(read.map(([, key]) => key)).not.toContain("{device-tree}:host:h1");
    // The store itself moved on.
    expect(await store.getDocs([k("a"), k("b"), k("c"), k("d")])).toEqual([{ n: 10 }, { n: 20 }, { n: 30 }, { n: 4 }]);
  });

  it("once read, keeps nothing: later writes are not saved for it, and a new capture reads the store as it is", async () => {
    const store = await seeded();
    [...store.openCapture("arqs")!.lines()];
    await store.applyBatch("arqs", [{ op: "put", key: k("a"), fields: { n: 10 } }], 2n, undefined, origin(2));
    const again = plain(store.openCapture("arqs")!.lines());
    expect(again.find(([, key]) => key === k("a"))).toEqual(["h", k("a"), { n: 10 }]);
  });

  it("a model dropped while its capture is read fails the reading", async () => {
    const store = await seeded();
    const lines = store.openCapture("arqs")!.lines();
    lines.next();
    await store.drop("arqs");
    expect(() => [...lines]).toThrow(/dropped while its snapshot was being written/);
  });

  it("captures a large hash field by field: changed before it is read, or while its line is written out, it reads as at the checkpoint", async () => {
    const store = await seeded();
    const big = k("by-device");
    const fields = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`dev-${i}`, `arq-${i}`]));
    await store.applyBatch("arqs", [{ op: "put", key: big, fields }], 2n, undefined, origin(2));
    // Changed before the capture reads it: the fields changed are kept as they were.
    const saved = store.openCapture("arqs")!;
    const savedLines = saved.lines();
    const firstSaved = savedLines.next();
    await store.applyBatch("arqs", [{ op: "put", key: big, fields: { "dev-0": "changed", "dev-new": "x" } }, { op: "unset", key: big, fields: ["dev-9"] }], 3n, undefined, origin(3));
    const read = [firstSaved.value as CapturedLine, ...savedLines].find(([, key]) => key === big)!;
    expect(read[2]).toBeInstanceOf(FieldsAtCapture);
    expect(valueOf(read[2])).toEqual(fields);

    // Read live, and changed while its fields are being read: fields already given and not yet
    // given changed, deleted, and deleted then set again (which a Map's walk meets a second time).
    const atCheckpoint = { ...(await store.getDocs([big]))[0]! };
    const lines = store.openCapture("arqs")!.lines();
    let line = lines.next();
    while ((line.value as CapturedLine)[1] !== big) line = lines.next();
    const walk = ((line.value as CapturedLine)[2] as FieldsAtCapture)[Symbol.iterator]();
    const given: Array<[string, unknown]> = [];
    for (let i = 0; i < 500; i++) given.push(walk.next().value as [string, unknown]);
    await store.applyBatch(
      "arqs",
      [
        { op: "put", key: big, fields: { "dev-1": "changed too", "dev-1500": "changed later", "dev-added": "y" } },
        { op: "unset", key: big, fields: ["dev-2", "dev-1600", "dev-3", "dev-1700"] },
        { op: "put", key: big, fields: { "dev-3": "back", "dev-1700": "back" } },
        { op: "index", index: big, member: "dev-4", value: null, order: k("all") },
        { op: "index", index: big, member: "dev-1800", value: "arq-other", order: k("all") },
      ],
      4n,
      undefined,
      origin(4),
    );
    for (let next = walk.next(); !next.done; next = walk.next()) given.push(next.value);
    expect(given.map(([f]) => f).sort()).toEqual(Object.keys(atCheckpoint).sort());
    expect(Object.fromEntries(given)).toEqual(atCheckpoint);
    [...lines];
    // Closed: the store moved on, and the next capture reads it as it is.
    const now = [...store.openCapture("arqs")!.lines()].find(([, key]) => key === big)!;
    expect(valueOf(now[2])).toMatchObject({ "dev-1": "changed too", "dev-3": "back", "dev-1800": "arq-other", "dev-added": "y" });
    expect(valueOf(now[2])).not.toHaveProperty("dev-2");
  });
});

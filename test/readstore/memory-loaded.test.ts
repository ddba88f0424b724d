/**
 * Keys loaded from a snapshot (MemoryReadStore.restore) stay in the file's bytes until used or
 * taken out in the background (settleLoaded), the large ones first, paced, so the file's buffer can
 * be freed. Reads answer the same whichever form a key is in.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Pacing } from "../../src/infra/duty-cycle.js";
import { MemoryReadStore, type CapturedModel, type RawJson } from "../../src/infra/readstore/memory.js";

afterEach(() => vi.restoreAllMocks());

/** Each content as the snapshot loader leaves it: its JSON text's place in one buffer. */
function rawModel(hashes: Array<[string, object]>, zsets: Array<[string, Array<[string, number]>]>): CapturedModel {
  const texts = [...hashes, ...zsets].map(([, content]) => JSON.stringify(content));
  const bytes = Buffer.from(texts.join(""));
  let at = 0;
  const raws: RawJson[] = texts.map((t) => {
    const raw = { bytes, start: at, end: at + Buffer.byteLength(t) };
    at = raw.end;
    return raw;
  });
  return {
    checkpoint: 7n,
    origin: { log: "log-1", event: "event-7" },
    hashes: hashes.map(([k], i) => [k, raws[i]!]),
    zsets: zsets.map(([k], i) => [k, raws[hashes.length + i]!]),
  };
}

const members = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
/** An index's reverse hash over 2,000 members (about 100 KiB of text) and its sets. */
const bigIndex = Object.fromEntries(members(2000).map((m, i) => [m, i % 2 ? "GPU" : "FPGA"]));
const bigSet = members(1000).map((m, i): [string, number] => [m, i]);

function loaded(smallKeys = 3): MemoryReadStore {
  const store = new MemoryReadStore();
  const small = Array.from({ length: smallKeys }, (_, i): [string, object] => [`{p}:dev:${i}`, { uuid: `dev-${i}`, n: i }]);
  store.restore("p", rawModel([["{p}:by-type", bigIndex], ...small], [["{p}:all", bigSet], ["{p}:children:x", [["a", 1], ["b", 2]]]]));
  return store;
}

const turns = (): Pacing & { pauses: number } => ({ pauses: 0, async pause() { this.pauses++; } });

describe("keys loaded from a snapshot", () => {
  it("are taken out in the background once; reads are the same before and after", async () => {
    const store = loaded();
    const before = await loaded().dump("p"); // a dump reads every key: another store's
    expect(Object.keys(before.keys)).toHaveLength(6);
    expect(await store.settleLoaded(turns())).toBe(6);
    expect(await store.settleLoaded(turns())).toBe(0);
    expect(await store.dump("p")).toEqual(before);
    expect(await store.getDocs(["{p}:dev:2", "{p}:by-type"])).toEqual([{ uuid: "dev-2", n: 2 }, bigIndex]);
    expect(await store.count(["{p}:all", "{p}:children:x"])).toEqual([1000, 2]);
  });

  it("a key used before the background reaches it is not taken out twice", async () => {
    const store = loaded();
    expect(await store.getDocs(["{p}:dev:0"])).toEqual([{ uuid: "dev-0", n: 0 }]);
    expect(await store.getMembers(["{p}:children:x"])).toEqual([["a", "b"]]);
    expect(await store.settleLoaded(turns())).toBe(4);
  });

  it("index writes on a large loaded reverse hash parse its text once, not at every write", async () => {
    const store = loaded();
    const parse = vi.spyOn(JSON, "parse");
    const [first] = members(1);
    for (let cp = 8n; cp < 28n; cp++) {
      // Twice the value it holds (reports that change nothing), then twice another.
      await store.applyBatch("p", [{ op: "index", index: "{p}:by-type", order: "{p}:all", member: first!, value: cp % 4n < 2n ? "FPGA" : "GPU" }], cp, undefined, { log: "log-1", event: `event-${cp}` });
    }
    // Each large text is parsed once, at its first use (the index's order set when the value first changed), not at every write.
    const parsedLarge = parse.mock.calls.flatMap(([text]) => (typeof text === "string" && text.length > 10_000 ? [text.length] : []));
    expect(parsedLarge).toEqual([JSON.stringify(bigIndex).length, JSON.stringify(bigSet).length]);
    expect((await store.getDocs(["{p}:by-type"]))[0]![first!]).toBe("GPU");
    expect(await store.count(["{p}:by-type:FPGA", "{p}:by-type:GPU"])).toEqual([0, 1]);
  });

  it("takes the large ones first, each followed by a pause, then the rest a slice at a time; ends early once told to stop", async () => {
    let clock = 0;
    vi.spyOn(performance, "now").mockImplementation(() => (clock += 1));
    const store = loaded(1000);
    const pacing = turns();
    expect(await store.settleLoaded(pacing)).toBe(1003);
    // The clock moves 1 ms at each look, every 64 keys: a slice of 2 ms is 128 keys.
    expect(pacing.pauses).toBe(2 + Math.floor(1001 / 128));

    const again = loaded(1000);
    const parse = vi.spyOn(JSON, "parse");
    let stop = false;
    const stopping: Pacing = { async pause() { stop = true; } };
    expect(await again.settleLoaded(stopping, () => stop)).toBe(1);
    expect(parse.mock.calls.map(([text]) => (text as string).length)).toEqual([JSON.stringify(bigIndex).length]);
    expect(await again.settleLoaded(turns())).toBe(1002);
  });
});

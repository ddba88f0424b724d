/**
 * Snapshot files (src/infra/readstore/snapshot-file.ts): what is written reads back whole, and a
 * file that is torn, corrupt, of another format, version, name or layout is refused with a reason.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CHUNK, readSnapshot, SYNC_EVERY, writeSnapshot, type SnapshotHeader } from "../../src/infra/readstore/snapshot-file.js";

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const fileIn = () => {
  const d = mkdtempSync(join(tmpdir(), "cyborg-es-snapshot-"));
  dirs.push(d);
  return join(d, "m.snapshot");
};

const header: SnapshotHeader = { format: "f", version: 2, name: "m", checkpoint: "42", origin: { log: "first", event: "e42" }, layout: "abc" };
const expected = { format: "f", version: 2, name: "m", layout: "abc" };
const lines = ["[1,2]", JSON.stringify({ text: "é ✓ \u2028" }), "[]"];

describe("snapshot files", () => {
  it("read back whole: header and lines; no temporary file is left", async () => {
    const file = fileIn();
    await writeSnapshot(file, header, lines);
    expect(await readSnapshot(file, expected)).toEqual({ ok: true, header, lines });
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });

  it("are checked by a CRC-32; one checked by a SHA-256 (as earlier versions wrote) reads back too, and is refused when corrupt", async () => {
    const file = fileIn();
    await writeSnapshot(file, header, lines);
    const text = readFileSync(file, "utf8");
    const body = text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1);
    expect(text.slice(body.length)).toMatch(/^\{"crc32":"[0-9a-f]{8}"\}\n$/);
    writeFileSync(file, body + JSON.stringify({ sha256: createHash("sha256").update(body).digest("hex") }) + "\n");
    expect(await readSnapshot(file, expected)).toEqual({ ok: true, header, lines });
    writeFileSync(file, body.replace("[1,2]", "[1,3]") + JSON.stringify({ sha256: createHash("sha256").update(body).digest("hex") }) + "\n");
    expect(await readSnapshot(file, expected)).toEqual({ ok: false, reason: "its checksum does not match its content (a corrupt file)" });
    writeFileSync(file, body + JSON.stringify({ md5: "0" }) + "\n");
    expect(await readSnapshot(file, expected)).toMatchObject({ ok: false, reason: expect.stringMatching(/^it is torn/) });
  });

  it("a missing file is none (not a refusal)", async () => {
    expect(await readSnapshot(fileIn(), expected)).toBeUndefined();
  });

  it("many lines, written in several chunks, read back in order", async () => {
    const file = fileIn();
    const many = Array.from({ length: 30_000 }, (_, i) => JSON.stringify(["h", `key-${i}`, "x".repeat(50)]));
    await writeSnapshot(file, header, many);
    const read = await readSnapshot(file, expected);
    expect(read?.ok && read.lines).toEqual(many);
  });

  it("a line given in pieces is one line; each piece is made once the one before is written, after a turn of the event loop", async () => {
    const file = fileIn();
    let turned = true;
    let pieces = 0;
    const made: boolean[] = [];
    function* inPieces() {
      for (const piece of ['["h","big",{', '"a":1,', '"b":2', "}]"]) {
        made.push(turned);
        turned = false;
        setImmediate(() => (turned = true));
        pieces++;
        yield piece;
      }
    }
    await writeSnapshot(file, header, ["[1]", inPieces(), "[2]"]);
    expect(pieces).toBe(4);
    expect(made).toEqual([true, true, true, true]);
    expect(await readSnapshot(file, expected)).toEqual({ ok: true, header, lines: ["[1]", '["h","big",{"a":1,"b":2}]', "[2]"] });
  });

  it("lines of multi-byte text across the buffer's end, and a line or piece longer than the buffer, read back exactly", async () => {
    const file = fileIn();
    const text = (n: number, i: number) => JSON.stringify(["h", `key-${i}`, "é✓\u2028x".repeat(n)]);
    const mixed = Array.from({ length: 4_000 }, (_, i) => text(1 + ((i * 37) % 90), i));
    const long = text(CHUNK / 2, -1); // more than CHUNK bytes: each "é✓\u2028x" is 9 of them
    function* pieces() {
      yield '["h","big",{';
      yield `"a":${JSON.stringify("✓".repeat(CHUNK))},`;
      yield '"b":2}]';
    }
    await writeSnapshot(file, header, [...mixed.slice(0, 2_000), long, pieces(), ...mixed.slice(2_000)]);
    const read = await readSnapshot(file, expected);
    expect(read?.ok && read.lines).toEqual([...mixed.slice(0, 2_000), long, `["h","big",{"a":${JSON.stringify("✓".repeat(CHUNK))},"b":2}]`, ...mixed.slice(2_000)]);
  });

  it("asks its pacing for a pause after each write", async () => {
    const file = fileIn();
    const many = Array.from({ length: 30_000 }, (_, i) => JSON.stringify(["h", `key-${i}`, "x".repeat(50)]));
    let pauses = 0;
    await writeSnapshot(file, header, many, { pause: async () => void pauses++ });
    // About 2 MB of lines, written CHUNK bytes at a time: a pause after each.
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(2e6 / CHUNK));
    let few = 0;
    await writeSnapshot(fileIn(), header, lines, { pause: async () => void few++ });
    expect(few).toBe(1);
    const read = await readSnapshot(file, expected);
    expect(read?.ok && read.lines).toEqual(many);
  });

  it("refuses a torn file: cut anywhere, it does not end with its checksum", async () => {
    const file = fileIn();
    await writeSnapshot(file, header, lines);
    const size = readFileSync(file).length;
    for (const cut of [size - 1, size - 10, 30, 0]) {
      await writeSnapshot(file, header, lines);
      truncateSync(file, cut);
      const read = await readSnapshot(file, expected);
      expect(read).toMatchObject({ ok: false, reason: expect.stringMatching(/torn|checksum/) });
    }
  });

  it("refuses a corrupt file: one byte changed", async () => {
    const file = fileIn();
    await writeSnapshot(file, header, lines);
    const bytes = readFileSync(file);
    bytes[bytes.indexOf("[1,2]") + 1] = "7".charCodeAt(0);
    writeFileSync(file, bytes);
    expect(await readSnapshot(file, expected)).toEqual({ ok: false, reason: "its checksum does not match its content (a corrupt file)" });
  });

  it("refuses another format, version, name or layout, and a header without an origin", async () => {
    const file = fileIn();
    const refusal = async (h: Partial<SnapshotHeader>) => {
      await writeSnapshot(file, { ...header, ...h } as SnapshotHeader, lines);
      const read = await readSnapshot(file, expected);
      expect(read?.ok).toBe(false);
      return read?.ok === false ? read.reason : "";
    };
    expect(await refusal({ format: "g" })).toBe("it is a g snapshot, not a f one");
    expect(await refusal({ version: 1 })).toBe("its format version is 1; this version reads 2");
    expect(await refusal({ name: "n" })).toBe("it holds n, not m");
    expect(await refusal({ layout: "old" })).toMatch(/written by a build whose m code differs/);
    expect(await refusal({ origin: undefined })).toBe("its header is not a snapshot's");
  });
});

/** The prototype of node's FileHandle (not exported), whose `datasync` the writer calls. */
async function fileHandlePrototype(): Promise<{ datasync(): Promise<void> }> {
  const handle = await open(fileIn(), "w");
  await handle.close();
  return Object.getPrototypeOf(handle) as { datasync(): Promise<void> };
}

describe("snapshot files, synced as they are written", () => {
  /** Lines of about a mebibyte each, `n` of them. */
  const mebibyteLines = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify(`${i}:`.padEnd(1 << 20, "x")));

  it("a snapshot of many mebibytes is synced every SYNC_EVERY bytes while it is written, and reads back whole", async () => {
    const datasync = vi.spyOn(await fileHandlePrototype(), "datasync");
    const file = fileIn();
    const big = mebibyteLines(10);
    await writeSnapshot(file, header, big);
    // 10 MiB in writes of about 1 MiB: a sync after each 4 MiB (the end's own sync comes on top).
    expect(SYNC_EVERY).toBe(4 << 20);
    expect(datasync).toHaveBeenCalledTimes(2);
    expect(await readSnapshot(file, expected)).toEqual({ ok: true, header, lines: big });
  });

  it("a small snapshot is synced once, at its end", async () => {
    const datasync = vi.spyOn(await fileHandlePrototype(), "datasync");
    const file = fileIn();
    await writeSnapshot(file, header, lines);
    expect(datasync).not.toHaveBeenCalled();
    expect(await readSnapshot(file, expected)).toEqual({ ok: true, header, lines });
  });

  it("a sync that fails fails the write: the snapshot before stays, and no temporary file is left", async () => {
    const file = fileIn();
    await writeSnapshot(file, header, lines);
    vi.spyOn(await fileHandlePrototype(), "datasync").mockRejectedValueOnce(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }));
    await expect(writeSnapshot(file, { ...header, checkpoint: "43" }, mebibyteLines(10))).rejects.toThrow(/EIO/);
    expect(await readSnapshot(file, expected)).toEqual({ ok: true, header, lines });
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });
});

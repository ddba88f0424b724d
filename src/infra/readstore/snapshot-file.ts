/**
 * A snapshot file: state that a process rebuilt from the log, written so that the next start can
 * load it and read only the events after its checkpoint. Line-oriented JSON:
 *
 *   {"format":..., "version":..., "name":..., "checkpoint":"<position>", "origin":{"log","event"}}
 *   <one JSON value a line, as the writer chose>
 *   {"crc32":"<hex of the CRC-32 of every byte above>"}     (or {"sha256":"<hex>"}, see below)
 *
 * It is written to `<file>.tmp`, synced, and renamed over `<file>` (then the directory is synced):
 * a crash leaves the old snapshot or the new one, never half of one. Reading checks the trailer's
 * checksum, the format, the version and the name; a file that fails any of them is refused with a
 * reason (the caller logs it and rebuilds from the log). Whether the checkpoint is THIS log's is
 * the caller's check (the origin names the log's first event and the event at the checkpoint).
 *
 * The checksum tells a torn or corrupt file (a disk or copy error), not a forged one: the files
 * are the service's own, in its DATA_DIR. CRC-32 (zlib's, some 20 times faster than SHA-256 here:
 * it is on the restart's path) is written where node has it (20.15 and later), SHA-256 otherwise;
 * a reader checks whichever the trailer names, so files of either kind read back.
 */
import { createHash } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { crc32, type ChecksumThread } from "./checksum-thread.js";
import type { Origin } from "./port.js";
import type { Pacing } from "../duty-cycle.js";

export interface SnapshotHeader {
  format: string;
  version: number;
  /** What the snapshot holds (a projection's name, a reactor's). */
  name: string;
  /** The log position the state reflects (decimal string). */
  checkpoint: string;
  origin: Origin;
  /** What the content's meaning depends on (a fingerprint of the code that wrote it): another one is refused. */
  layout?: string;
}

export type SnapshotRead = { ok: true; header: SnapshotHeader; lines: string[] } | { ok: false; reason: string };

/**
 * A checked snapshot's content as bytes: `bytes[start, end)` holds its lines, each ending with a
 * newline (a reader that needs only part of each line need not decode the rest).
 */
export interface SnapshotBody {
  bytes: Buffer;
  start: number;
  end: number;
}

/**
 * `verified`: undefined once the file's checksum matched, or why it did not. Read with a
 * ChecksumThread, the check may still be running when the read returns: nothing decoded from the
 * body may be used before it has answered undefined.
 */
export type SnapshotBytesRead = { ok: true; header: SnapshotHeader; body: SnapshotBody; verified: Promise<string | undefined> } | { ok: false; reason: string };

type Expected = { format: string; version: number; name: string; layout?: string };

/** The checksums a trailer may name, each as the hex of `bytes`. */
const CHECKSUMS: Record<string, ((bytes: Uint8Array) => string) | undefined> = {
  crc32: crc32 && ((bytes) => hex(crc32!(bytes))),
  sha256: (bytes) => createHash("sha256").update(bytes).digest("hex"),
};

/** What this process writes: CRC-32 where node has it. */
const WRITTEN = crc32 ? "crc32" : "sha256";

/** A running checksum over the chunks written, as the trailer's line. */
function runningChecksum(): { update(bytes: Uint8Array): void; trailer(): string } {
  if (WRITTEN === "crc32") {
    let value = 0;
    return { update: (bytes) => void (value = crc32!(bytes, value)), trailer: () => JSON.stringify({ crc32: value.toString(16).padStart(8, "0") }) };
  }
  const hash = createHash("sha256");
  return { update: (bytes) => void hash.update(bytes), trailer: () => JSON.stringify({ sha256: hash.digest("hex") }) };
}

/**
 * Lines are copied into a buffer of this many bytes, written when full, in one step of the event
 * loop between the pacing's pauses. The buffer is the same one throughout: lines joined into a
 * string of this size would be a new object too large for V8's young generation at every write,
 * garbage for the old generation (writing 1.7 million lines: 3 full collections that way, none
 * this way). At 1 MiB of lines a step held the event loop 40-60 ms at 10,000 hosts, which a
 * request meeting it waited; a quarter of that is a quarter of the wait.
 */
export const CHUNK = 1 << 18;
/** Characters of lines joined before they are copied into the buffer (at most 64 KiB of text: a young-generation string). */
const JOIN = 1 << 15;

/**
 * The file is synced each time about this many bytes were written since the last sync. Left to
 * the kernel, a snapshot's hundreds of megabytes would reach the disk in one burst (at its final
 * sync, or when the pages expire), and every commit of the log meanwhile (each one synced: an
 * acknowledged write is on disk) would wait behind the burst: at 10,000 hosts, the binds that met
 * one took 50-80 ms instead of 10. Synced as it goes, the disk never has more than this much of
 * the snapshot's to write before a commit's turn.
 */
export const SYNC_EVERY = 4 << 20;

/** A line of a snapshot: its text, or its text in pieces (a large key's), each made once the one before is written. */
export type SnapshotLine = string | Iterable<string>;

/**
 * Writes header, lines and checksum to `file`, atomically (write-then-rename); `pace` is asked
 * after each write (a background snapshot leaves most of the main thread to requests).
 */
export async function writeSnapshot(file: string, header: SnapshotHeader, lines: Iterable<SnapshotLine>, pace?: Pacing): Promise<void> {
  const tmp = `${file}.tmp`;
  const hash = runningChecksum();
  const handle = await open(tmp, "w");
  try {
    const out = Buffer.allocUnsafe(CHUNK);
    let used = 0;
    // A sync runs while the next bytes are written, and is awaited only when the next one is due:
    // `pace` seldom counts its wait as work, and at most two syncs' worth of bytes is unsynced.
    let unsynced = 0;
    let syncing: Promise<unknown> = Promise.resolve();
    const synced = async () => {
      const failed = await syncing;
      if (failed instanceof Error) throw failed;
    };
    const write = async (bytes: Buffer) => {
      hash.update(bytes);
      await handle.write(bytes);
      unsynced += bytes.length;
      if (unsynced >= SYNC_EVERY) {
        await synced();
        syncing = handle.datasync().catch((err: Error) => err);
        unsynced = 0;
      }
    };
    const flush = async () => {
      if (used > 0) await write(out.subarray(0, used));
      used = 0;
      await pace?.pause();
    };
    /** Copies `text` into the buffer if it has room (a UTF-8 byte count only where it may not). */
    const put = (text: string): boolean => {
      const room = out.length - used;
      if (text.length * 3 > room && Buffer.byteLength(text, "utf8") > room) return false;
      used += out.write(text, used, "utf8");
      return true;
    };
    /** `put`, after writing the buffer out when it is full; a text longer than the buffer is written on its own. */
    const add = async (text: string) => {
      if (put(text)) return;
      await flush();
      if (!put(text)) await write(Buffer.from(text, "utf8"));
    };
    // Lines are joined into a short text before each copy (one call into node's C++ per line costs
    // half the writing's time), short enough to stay in the young generation.
    let joined = "";
    const copyJoined = async () => {
      const text = joined;
      joined = "";
      await add(text);
    };
    await add(JSON.stringify(header) + "\n");
    for (const line of lines) {
      if (typeof line === "string") joined += line;
      else {
        await copyJoined();
        for (const piece of line) {
          // Each piece is made only once the one before is written: the event loop turns between them.
          await add(piece);
          await flush();
        }
      }
      joined += "\n";
      if (joined.length >= JOIN) await copyJoined();
    }
    await copyJoined();
    await flush();
    await handle.write(hash.trailer() + "\n");
    await synced();
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(tmp, file);
  await syncDir(dirname(file));
}

/** Reads and checks `file`; undefined when there is none. */
export async function readSnapshot(file: string, expect: Expected): Promise<SnapshotRead | undefined> {
  const read = await readSnapshotBytes(file, expect);
  if (read === undefined || !read.ok) return read;
  const refused = await read.verified;
  if (refused !== undefined) return { ok: false, reason: refused };
  return { ok: true, header: read.header, lines: snapshotLines(read.body) };
}

/**
 * Reads and checks `file` as `readSnapshot` does, leaving its lines as bytes; undefined when there
 * is none. With `thread`, the file is read into shared memory and its CRC-32 computed on that
 * thread (`verified` answers when it is done).
 */
export async function readSnapshotBytes(file: string, expect: Expected, thread?: ChecksumThread): Promise<SnapshotBytesRead | undefined> {
  let bytes: Buffer;
  try {
    bytes = thread ? await readShared(file) : await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { ok: false, reason: `it cannot be read (${(err as Error).message})` };
  }
  const trailer = trailerOf(bytes);
  if (typeof trailer === "string") return { ok: false, reason: trailer };
  const checked = trailer.end;
  const verified = thread && trailer.kind === "crc32" ? thread.crc32(bytes.subarray(0, checked)).then((v) => matches(hex(v), trailer.sum)) : Promise.resolve(matches(CHECKSUMS[trailer.kind]!(bytes.subarray(0, checked)), trailer.sum));
  // Refused below without waiting: nothing of it is used.
  verified.catch(() => undefined);
  const headerEnd = bytes.indexOf(0x0a);
  const header = headerEnd < checked ? parseHeader(bytes.toString("utf8", 0, headerEnd)) : undefined;
  if (header === undefined) return { ok: false, reason: "its header is not a snapshot's" };
  if (header.format !== expect.format) return { ok: false, reason: `it is a ${header.format} snapshot, not a ${expect.format} one` };
  if (header.version !== expect.version) return { ok: false, reason: `its format version is ${header.version}; this version reads ${expect.version}` };
  if (header.name !== expect.name) return { ok: false, reason: `it holds ${header.name}, not ${expect.name}` };
  if (header.layout !== expect.layout) return { ok: false, reason: `it was written by a build whose ${expect.name} code differs (layout ${header.layout ?? "none"}, this build's ${expect.layout ?? "none"})` };
  return { ok: true, header, body: { bytes, start: headerEnd + 1, end: checked }, verified };
}

const hex = (crc: number) => crc.toString(16).padStart(8, "0");
const matches = (computed: string, recorded: string): string | undefined => (computed === recorded ? undefined : "its checksum does not match its content (a corrupt file)");

/** The file's bytes in shared memory (a worker thread can read them in place). */
async function readShared(file: string): Promise<Buffer> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    const bytes = Buffer.from(new SharedArrayBuffer(size));
    let at = 0;
    while (at < size) {
      const { bytesRead } = await handle.read(bytes, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === size ? bytes : bytes.subarray(0, at);
  } finally {
    await handle.close();
  }
}

/** The lines of a checked body, decoded. */
export function snapshotLines(body: SnapshotBody): string[] {
  const lines: string[] = [];
  for (let at = body.start; at < body.end; ) {
    const nl = body.bytes.indexOf(0x0a, at);
    lines.push(body.bytes.toString("utf8", at, nl));
    at = nl + 1;
  }
  return lines;
}

/** The trailer: the length of the checked part (header and lines) and its checksum; or why the file is refused. */
function trailerOf(bytes: Buffer): { end: number; kind: string; sum: string } | string {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a) return "it is torn (it does not end with its checksum line)";
  const start = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
  let trailer: unknown;
  try {
    trailer = JSON.parse(bytes.subarray(start, bytes.length - 1).toString("utf8"));
  } catch {
    return "it is torn (its last line is not its checksum)";
  }
  const entries = trailer !== null && typeof trailer === "object" ? Object.entries(trailer) : [];
  if (entries.length !== 1 || typeof entries[0]![1] !== "string" || !(entries[0]![0] in CHECKSUMS)) return "it is torn (its last line is not its checksum)";
  const [kind, sum] = entries[0] as [string, string];
  const checksum = CHECKSUMS[kind];
  if (checksum === undefined) return `its checksum is a ${kind}, which this node cannot compute (node 20.15 or later can)`;
  return { end: start, kind, sum };
}

function parseHeader(line: string): SnapshotHeader | undefined {
  try {
    const h = JSON.parse(line) as Partial<SnapshotHeader>;
    const origin = h.origin as Partial<Origin> | undefined;
    const valid = typeof h.format === "string" && typeof h.version === "number" && typeof h.name === "string" && typeof h.checkpoint === "string" && /^\d+$/.test(h.checkpoint);
    if (!valid || typeof origin?.log !== "string" || typeof origin.event !== "string") return undefined;
    return h as SnapshotHeader;
  } catch {
    return undefined;
  }
}

/** The rename is durable once the directory's entry is on disk. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch {
    // Some file systems refuse to sync a directory; the rename is still atomic.
  } finally {
    await handle.close();
  }
}

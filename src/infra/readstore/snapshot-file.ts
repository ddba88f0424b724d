/**
 * A snapshot file: state that a process rebuilt from the log, written so that the next start can
 * load it and read only the events after its checkpoint. Line-oriented JSON:
 *
 *   {"format":..., "version":..., "name":..., "checkpoint":"<position>", "origin":{"log","event"}}
 *   <one JSON value a line, as the writer chose>
 *   {"sha256":"<hex of every byte above>"}
 *
 * It is written to `<file>.tmp`, synced, and renamed over `<file>` (then the directory is synced):
 * a crash leaves the old snapshot or the new one, never half of one. Reading checks the trailer's
 * checksum, the format, the version and the name; a file that fails any of them is refused with a
 * reason (the caller logs it and rebuilds from the log). Whether the checkpoint is THIS log's is
 * the caller's check (the origin names the log's first event and the event at the checkpoint).
 */
import { createHash } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import type { Origin } from "./port.js";

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

/** Lines are buffered into writes of about this many characters. */
const CHUNK = 1 << 20;

/** Writes header, lines and checksum to `file`, atomically (write-then-rename). */
export async function writeSnapshot(file: string, header: SnapshotHeader, lines: Iterable<string>): Promise<void> {
  const tmp = `${file}.tmp`;
  const hash = createHash("sha256");
  const handle = await open(tmp, "w");
  try {
    let chunk = JSON.stringify(header) + "\n";
    const flush = async () => {
      const bytes = Buffer.from(chunk, "utf8");
      hash.update(bytes);
      await handle.write(bytes);
      chunk = "";
    };
    for (const line of lines) {
      chunk += line + "\n";
      if (chunk.length >= CHUNK) await flush();
    }
    await flush();
    await handle.write(JSON.stringify({ sha256: hash.digest("hex") }) + "\n");
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
export async function readSnapshot(file: string, expect: { format: string; version: number; name: string; layout?: string }): Promise<SnapshotRead | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { ok: false, reason: `it cannot be read (${(err as Error).message})` };
  }
  const body = checkedBody(bytes);
  if (typeof body === "string") return { ok: false, reason: body };
  const lines = splitLines(bytes, body);
  const header = parseHeader(lines.shift());
  if (header === undefined) return { ok: false, reason: "its header is not a snapshot's" };
  if (header.format !== expect.format) return { ok: false, reason: `it is a ${header.format} snapshot, not a ${expect.format} one` };
  if (header.version !== expect.version) return { ok: false, reason: `its format version is ${header.version}; this version reads ${expect.version}` };
  if (header.name !== expect.name) return { ok: false, reason: `it holds ${header.name}, not ${expect.name}` };
  if (header.layout !== expect.layout) return { ok: false, reason: `it was written by a build whose ${expect.name} code differs (layout ${header.layout ?? "none"}, this build's ${expect.layout ?? "none"})` };
  return { ok: true, header, lines };
}

/** The length of the checked part (header and lines), or why the file is refused. */
function checkedBody(bytes: Buffer): number | string {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a) return "it is torn (it does not end with its checksum line)";
  const start = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
  let trailer: unknown;
  try {
    trailer = JSON.parse(bytes.subarray(start, bytes.length - 1).toString("utf8"));
  } catch {
    return "it is torn (its last line is not its checksum)";
  }
  const sha = (trailer as { sha256?: unknown } | null)?.sha256;
  if (typeof sha !== "string") return "it is torn (its last line is not its checksum)";
  if (createHash("sha256").update(bytes.subarray(0, start)).digest("hex") !== sha) return "its checksum does not match its content (a corrupt file)";
  return start;
}

function splitLines(bytes: Buffer, end: number): string[] {
  const lines: string[] = [];
  let at = 0;
  while (at < end) {
    const nl = bytes.indexOf(0x0a, at);
    lines.push(bytes.subarray(at, nl).toString("utf8"));
    at = nl + 1;
  }
  return lines;
}

function parseHeader(line: string | undefined): SnapshotHeader | undefined {
  if (line === undefined) return undefined;
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

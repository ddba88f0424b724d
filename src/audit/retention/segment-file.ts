/**
 * An archive segment on disk: the events of the streams one retention run moved out of the live
 * log, in the export format (export.ts: one NDJSON line an event, in position order), compressed
 * with brotli. Beside it, `<file>.refs` (brotli JSON): the audit index's entries of those events
 * (history and trace of archived objects), since the live index drops them.
 *
 * A file is written whole under a temporary name, synced, then renamed: a crash leaves either no
 * file or a whole one. The live log records a segment (its SHA-256) only after that, in the
 * commit that removes its streams, so a file the log does not record is a leftover and is ignored.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pipeline } from "node:stream";
import { brotliCompressSync, brotliDecompressSync, constants, createBrotliDecompress } from "node:zlib";
import type { RecordedEvent } from "../../infra/eventstore/port.js";
import { fromLine, toLine } from "../export.js";

/** What a segment holds, for lookups without reading it whole. */
export interface SegmentRefs {
  /** Audit index entries by key (`{audit}:object:<uuid>`, `{audit}:request:<id>`): members "<position> <revision> <stream>". */
  refs: Record<string, string[]>;
  /** Each stream's first and last position in the segment. */
  streams: Record<string, [string, string]>;
}

export const segmentFileName = (seq: number): string => `segment-${String(seq).padStart(6, "0")}.ndjson.br`;
export const refsFileName = (file: string): string => `${file}.refs`;

// Quality 5: about 8x on the log's JSON at a small fraction of quality 11's time.
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

/** Writes a segment (events in position order) and its refs; returns the file's SHA-256. */
export async function writeSegment(dir: string, file: string, events: readonly RecordedEvent[], refs: SegmentRefs): Promise<{ sha256: string; bytes: number }> {
  await mkdir(dir, { recursive: true });
  const body = brotliCompressSync(Buffer.from(events.map((e) => toLine(e) + "\n").join("")), BROTLI);
  await writeWhole(dir, refsFileName(file), brotliCompressSync(Buffer.from(JSON.stringify(refs)), BROTLI));
  await writeWhole(dir, file, body);
  return { sha256: createHash("sha256").update(body).digest("hex"), bytes: body.length };
}

async function writeWhole(dir: string, file: string, bytes: Buffer): Promise<void> {
  const tmp = join(dir, `.${file}.tmp`);
  const fh = await open(tmp, "w");
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, join(dir, file));
  const d = await open(dir, "r");
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

/** SHA-256 of a segment file's bytes, read as a stream. */
export async function fileSha256(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

/** A segment's events, one at a time, decompressed as they are read (bounded memory). */
export async function* segmentEvents(path: string): AsyncGenerator<RecordedEvent> {
  const input = createBrotliDecompress();
  // pipeline hands a read or decompression error on to the lines below, and its callback keeps an
  // error that comes after a reader stopped early from being thrown at nobody.
  pipeline(createReadStream(path), input, () => undefined);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  try {
    for await (const line of lines) {
      n++;
      if (line === "") continue;
      try {
        yield fromLine(line);
      } catch (err) {
        throw new Error(`${path}, line ${n}: not an exported event (${(err as Error).message})`);
      }
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

export async function readRefs(path: string): Promise<SegmentRefs> {
  return JSON.parse(brotliDecompressSync(await readFile(path)).toString("utf8")) as SegmentRefs;
}

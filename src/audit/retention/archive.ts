/**
 * The archive: the segments retention wrote (segment-file.ts), as the live log records them
 * (ArchivingStore.readArchiveSegments). Reads what audit needs of them: every event in position
 * order (verify), one stream's events (history, trace, asOf), the audit index entries of a key.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { LRUCache } from "lru-cache";
import { GENESIS } from "../../infra/eventstore/chain.js";
import type { ArchiveSegmentRecord, ArchivingStore, RecordedEvent } from "../../infra/eventstore/port.js";
import { fileSha256, readRefs, refsFileName, segmentEvents, type SegmentRefs } from "./segment-file.js";

/** The text a segment record is chained by: its fields in a fixed order. */
export const recordText = (r: ArchiveSegmentRecord): string => JSON.stringify([r.seq, r.file, r.sha256, r.events, r.streams, r.first, r.last, r.previous, r.at]);
export const recordHash = (r: ArchiveSegmentRecord | undefined): string => (r === undefined ? GENESIS : createHash("sha256").update(recordText(r)).digest("hex"));

/** What is wrong with the archive as the live log records it: the segment and why. */
export interface ArchiveProblem {
  seq: number;
  file: string;
  reason: string;
}

export class Archive {
  private readonly refsCache = new LRUCache<number, SegmentRefs>({ max: 64 });

  constructor(
    readonly dir: string,
    private readonly log: ArchivingStore,
  ) {}

  segments(): Promise<ArchiveSegmentRecord[]> {
    return this.log.readArchiveSegments();
  }

  /** The records' own chain, and every file against the SHA-256 its record holds. */
  async check(): Promise<ArchiveProblem[]> {
    const problems: ArchiveProblem[] = [];
    let previous: ArchiveSegmentRecord | undefined;
    for (const r of await this.segments()) {
      if (r.previous !== recordHash(previous)) problems.push({ seq: r.seq, file: r.file, reason: "its record does not follow the previous segment's record: a record was changed or removed" });
      const path = join(this.dir, r.file);
      if (!existsSync(path)) problems.push({ seq: r.seq, file: r.file, reason: `the file is missing from ${this.dir}` });
      else if ((await fileSha256(path)) !== r.sha256) problems.push({ seq: r.seq, file: r.file, reason: "the file's SHA-256 differs from the one the live log recorded: the segment was changed" });
      previous = r;
    }
    return problems;
  }

  /** Every archived event strictly after `after`, in position order (the segments merged). */
  async *events(after?: bigint): AsyncGenerator<RecordedEvent> {
    const sources = (await this.segments()).map((r) => segmentEvents(join(this.dir, r.file)));
    try {
      const heads = await Promise.all(sources.map((s) => next(s, after)));
      for (;;) {
        let min = -1;
        for (let i = 0; i < heads.length; i++) if (heads[i] && (min < 0 || heads[i]!.position < heads[min]!.position)) min = i;
        if (min < 0) return;
        yield heads[min]!;
        heads[min] = await next(sources[min]!, after);
      }
    } finally {
      // A reader that stops early (or a segment that fails to read) closes every segment's file.
      await Promise.allSettled(sources.map((s) => s.return(undefined)));
    }
  }

  /**
   * A stream's archived events, in order: an ended stream is archived whole, in one segment; a
   * host stream's closed periods, in as many segments as retention runs moved them.
   */
  async readStream(stream: string): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    for (const r of await this.segments()) {
      const span = (await this.refsOf(r)).streams[stream];
      if (!span) continue;
      const last = BigInt(span[1]);
      for await (const e of segmentEvents(join(this.dir, r.file))) {
        if (e.position < BigInt(span[0])) continue;
        if (e.stream === stream) out.push(e);
        if (e.position >= last) break;
      }
    }
    return out;
  }

  /** The audit index entries the archive holds for these keys. */
  async refs(keys: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    for (const r of await this.segments()) {
      const refs = (await this.refsOf(r)).refs;
      for (const k of keys) out.push(...(refs[k] ?? []));
    }
    return out;
  }

  private async refsOf(r: ArchiveSegmentRecord): Promise<SegmentRefs> {
    let refs = this.refsCache.get(r.seq);
    if (!refs) this.refsCache.set(r.seq, (refs = await readRefs(join(this.dir, refsFileName(r.file)))));
    return refs;
  }
}

async function next(source: AsyncGenerator<RecordedEvent>, after: bigint | undefined): Promise<RecordedEvent | undefined> {
  for (;;) {
    const r = await source.next();
    if (r.done) return undefined;
    if (after === undefined || r.value.position > after) return r.value;
  }
}

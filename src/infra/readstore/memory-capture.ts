import type { Origin } from "./port.js";

/**
 * A key's content as a snapshot holds it, not parsed yet: the UTF-8 JSON text in `bytes[start, end)`
 * (`{"field":value,...}` for a hash, `[[member, score], ...]` for a sorted set). It is parsed when
 * the service first uses that key, so a restart reads only the keys.
 */
export interface RawJson {
  bytes: Buffer;
  start: number;
  end: number;
}

/** The text of a `RawJson`. */
export function rawText(raw: RawJson): string {
  return raw.bytes.toString("utf8", raw.start, raw.end);
}

/**
 * A hash as the JSON object of its fields, in a string or still in the snapshot's bytes; or, for a
 * hash of more than `LARGE_HASH` fields (an index's reverse hash names every member), a copy of its
 * map of fields, written out a piece at a time; undefined: no such hash.
 */
export type HashContent = string | RawJson | ReadonlyMap<string, unknown> | undefined;

/**
 * Above this many fields a hash is captured as a copy of its map (its values are frozen and shared),
 * not as its text: a copy of 80,000 fields takes a few milliseconds, their text a third of a second
 * in one step of the event loop.
 */
export const LARGE_HASH = 1_000;
/** A sorted set's entries in Redis order, or their JSON text (in a string or still in the snapshot's bytes); undefined: no such set. */
export type ZsetContent = Array<[member: string, score: number]> | string | RawJson | undefined;

export type CapturedLine = ["h", string, Exclude<HashContent, undefined>] | ["z", string, Exclude<ZsetContent, undefined>];

/** What a capture reads of the store: the projection's keys (live) and one key's content now. */
export interface CaptureSource {
  hashKeys: ReadonlyMap<string, unknown>;
  zsetKeys: ReadonlyMap<string, unknown>;
  hashContent(key: string): HashContent;
  zsetContent(key: string): ZsetContent;
}

/**
 * One projection as it was at a checkpoint, read while the store goes on taking writes (copy on
 * write): opening it copies nothing; before a write changes one of the projection's keys, the
 * store hands the key's content at the capture to `savingHash` / `savingZset` (once a key), and
 * `lines()` reads each key from what was saved, else from the store. A model of any size is thus
 * taken without stopping the service, and what it holds matches its checkpoint.
 */
export class ModelCapture {
  private readonly hashes = new Map<string, HashContent>();
  private readonly zsets = new Map<string, ZsetContent>();
  private voided = false;
  /** Keys read so far (all of them once `lines()` is done). */
  keys = 0;

  constructor(
    readonly checkpoint: bigint,
    readonly origin: Origin | undefined,
    private readonly source: CaptureSource,
    private readonly closed: () => void,
  ) {}

  /** Before the hash at `key` changes. */
  savingHash(key: string): void {
    if (!this.hashes.has(key)) this.hashes.set(key, this.source.hashContent(key));
  }

  /** Before the sorted set at `key` changes. */
  savingZset(key: string): void {
    if (!this.zsets.has(key)) this.zsets.set(key, this.source.zsetContent(key));
  }

  /** The projection was dropped or replaced meanwhile: reading on throws. */
  void(): void {
    this.voided = true;
  }

  /** Every hash, then every sorted set, of the projection at the checkpoint; closes the capture when done (or left). */
  *lines(): Generator<CapturedLine> {
    try {
      yield* this.pass("h", this.source.hashKeys, this.hashes, (k) => this.source.hashContent(k)) as Generator<CapturedLine>;
      yield* this.pass("z", this.source.zsetKeys, this.zsets, (k) => this.source.zsetContent(k)) as Generator<CapturedLine>;
    } finally {
      this.closed();
    }
  }

  private *pass<C>(kind: "h" | "z", live: ReadonlyMap<string, unknown>, saved: ReadonlyMap<string, C | undefined>, now: (key: string) => C | undefined): Generator<[string, string, C]> {
    // A key deleted and set again while this walks comes round again: it is read once.
    const seen = new Set<string>();
    for (const key of live.keys()) {
      if (this.voided) throw new Error("the read model was dropped while its snapshot was being written");
      if (seen.has(key)) continue;
      seen.add(key);
      const content = saved.has(key) ? saved.get(key) : now(key);
      if (content === undefined) continue;
      this.keys++;
      yield [kind, key, content];
    }
    // Deleted since the capture (and not set again): as they were.
    for (const [key, content] of saved) {
      if (seen.has(key) || content === undefined) continue;
      this.keys++;
      yield [kind, key, content];
    }
  }
}

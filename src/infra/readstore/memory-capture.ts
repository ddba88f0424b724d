import { PartedSet } from "./parted-set.js";
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
 * hash of more than `LARGE_HASH` fields (an index's reverse hash names every member), its fields at
 * the capture (`FieldsAtCapture`), written out a piece at a time; undefined: no such hash.
 */
export type HashContent = string | RawJson | FieldsAtCapture | undefined;

/**
 * Above this many fields a hash is captured field by field (`FieldsAtCapture`), not as its text:
 * the text of 80,000 fields takes a third of a second in one step of the event loop, and even a
 * copy of their map 50-90 ms (measured at 10,000 hosts), on a projector batch's path when a write
 * comes first.
 */
export const LARGE_HASH = 1_000;

/** A key the capture has given already: a change to it keeps nothing. */
const GIVEN = Symbol("given");

/** A field that the hash did not have at the capture. */
const ABSENT = Symbol("absent");

/**
 * A large hash as it was at a capture, without copying it: the store's own map of fields, and for
 * each field changed since, what it held before (copy on write, field by field). Reading it gives
 * the fields as at the capture, while the store goes on changing the map; the store hands each
 * change to `saving` before making it, for as long as the capture is open. Once the store lets go
 * of the map (the hash deleted, or kept in another form) the map no longer changes.
 */
export class FieldsAtCapture implements Iterable<[string, unknown]> {
  private readonly before = new Map<string, unknown>();

  constructor(readonly fields: ReadonlyMap<string, unknown>) {}

  /** Before the store changes `names` of `fields`. */
  saving(names: Iterable<string>): void {
    for (const f of names) if (!this.before.has(f)) this.before.set(f, this.fields.has(f) ? this.fields.get(f) : ABSENT);
  }

  /** The fields at the capture, each once, read while the map changes (a field deleted and set again comes round again in a Map's walk). */
  *[Symbol.iterator](): Generator<[string, unknown]> {
    const given = new PartedSet();
    for (const [f, now] of this.fields) {
      const changed = this.before.has(f);
      if (changed && given.has(f)) continue;
      given.add(f);
      const value = changed ? this.before.get(f) : now;
      if (value !== ABSENT) yield [f, value];
    }
    // Deleted since the capture (and not set again): as they were.
    for (const [f, value] of this.before) if (value !== ABSENT && !given.has(f)) yield [f, value];
  }
}

/** A sorted set's entries in Redis order, or their JSON text (in a string or still in the snapshot's bytes); undefined: no such set. */
export type ZsetContent = Array<[member: string, score: number]> | string | RawJson | undefined;

export type CapturedLine = ["h", string, Exclude<HashContent, undefined>] | ["z", string, Exclude<ZsetContent, undefined>];

/** What a capture reads of the store: the projection's keys (live) and one key's content now (a large hash's without copying it). */
export interface CaptureSource {
  hashKeys: ReadonlyMap<string, unknown>;
  zsetKeys: ReadonlyMap<string, unknown>;
  hashContent(key: string): HashContent;
  zsetContent(key: string): ZsetContent;
}

/**
 * One projection as it was at a checkpoint, read while the store goes on taking writes (copy on
 * write): opening it copies nothing; before a write changes one of the projection's keys, the
 * store hands the key's content at the capture to `savingHash` / `savingZset` (once a key; a large
 * hash's changed fields to `savingFields`, field by field), and `lines()` reads each key from what
 * was saved, else from the store; a key it has given keeps nothing when it changes later. A model
 * of any size is thus taken without stopping the service or copying a large key in one step, and
 * what it holds matches its checkpoint.
 */
export class ModelCapture {
  /** What each key changed since the capture held before (undefined: none such then), or GIVEN. */
  private readonly hashes = new Map<string, HashContent | typeof GIVEN>();
  private readonly zsets = new Map<string, ZsetContent | typeof GIVEN>();
  /**
   * Keys `lines()` has given as the store held them (unchanged until then): one changed later keeps
   * nothing (GIVEN), and is not given again when a Map's walk meets it a second time (deleted and
   * set again). Looked up once a key, when it is first saved, not at every step of the walk.
   */
  private readonly walked = { h: new PartedSet(), z: new PartedSet() };
  /** Saved keys `lines()` has given. */
  private readonly givenSaved = { h: new Set<string>(), z: new Set<string>() };
  private voided = false;
  /** Keys read so far (all of them once `lines()` is done). */
  keys = 0;

  constructor(
    readonly checkpoint: bigint,
    readonly origin: Origin | undefined,
    private readonly source: CaptureSource,
    private readonly closed: () => void,
  ) {}

  /** Before the hash at `key` changes (or is deleted). */
  savingHash(key: string): void {
    if (!this.hashes.has(key)) this.hashes.set(key, this.walked.h.has(key) ? GIVEN : this.source.hashContent(key));
  }

  /** Before `names` of the large hash at `key`, held in `fields`, change: only those fields are kept. */
  savingFields(key: string, fields: ReadonlyMap<string, unknown>, names: Iterable<string>): void {
    let saved = this.hashes.get(key);
    if (!this.hashes.has(key)) this.hashes.set(key, (saved = this.walked.h.has(key) ? GIVEN : new FieldsAtCapture(fields)));
    // Saved whole, or as a map the store has let go of since (that one no longer changes): nothing to keep.
    if (saved instanceof FieldsAtCapture && saved.fields === fields) saved.saving(names);
  }

  /** Before the sorted set at `key` changes. */
  savingZset(key: string): void {
    if (!this.zsets.has(key)) this.zsets.set(key, this.walked.z.has(key) ? GIVEN : this.source.zsetContent(key));
  }

  /** The projection was dropped or replaced meanwhile: reading on throws. */
  void(): void {
    this.voided = true;
  }

  /**
   * Every hash, then every sorted set, of the projection at the checkpoint; closes the capture when
   * done (or left). A large hash's content (`FieldsAtCapture`) is to be read before the next line
   * is asked for: the capture keeps its changed fields only while it is open.
   */
  *lines(): Generator<CapturedLine> {
    try {
      yield* this.pass("h", this.source.hashKeys, this.hashes, (k) => this.source.hashContent(k)) as Generator<CapturedLine>;
      yield* this.pass("z", this.source.zsetKeys, this.zsets, (k) => this.source.zsetContent(k)) as Generator<CapturedLine>;
    } finally {
      this.closed();
    }
  }

  private *pass<C>(kind: "h" | "z", live: ReadonlyMap<string, unknown>, saved: Map<string, C | undefined | typeof GIVEN>, now: (key: string) => C | undefined): Generator<[string, string, C]> {
    const walked = this.walked[kind];
    const givenSaved = this.givenSaved[kind];
    for (const key of live.keys()) {
      if (this.voided) throw new Error("the read model was dropped while its snapshot was being written");
      let content: C | undefined;
      if (saved.has(key)) {
        const s = saved.get(key);
        if (s === GIVEN || givenSaved.has(key)) continue;
        givenSaved.add(key);
        content = s;
      } else {
        content = now(key);
        // Read from the store's own map: its changes from now on are kept for it.
        if (content instanceof FieldsAtCapture) {
          saved.set(key, content);
          givenSaved.add(key);
        } else walked.add(key);
      }
      if (content === undefined) continue;
      this.keys++;
      yield [kind, key, content];
    }
    // Deleted since the capture (and not set again): as they were.
    for (const [key, content] of saved) {
      if (content === undefined || content === GIVEN || givenSaved.has(key)) continue;
      this.keys++;
      yield [kind, key, content];
    }
  }
}

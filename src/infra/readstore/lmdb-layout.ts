/**
 * What LmdbReadStore keeps in LMDB: named databases of one environment (one write transaction
 * spans them all), with binary keys compared byte by byte:
 *   fields  K + T(field)       -> JSON text   a doc's fields; a doc exists while it has one
 *   scores  K + T(member)      -> S           a member's score, looked up by member
 *   order   K + S + T(member)  -> (empty)     the same members in (score, member) order, and
 *           K                  -> count       before them, how many there are (absent: none; a
 *                                             64-bit float; lmdb-sorted-sets.ts readCount)
 *   sizes   K                  -> count       where stores written before kept the count: read
 *                                             while it is there, moved to order when written
 *   meta    projection name    -> Meta        checkpoint and serving mark
 * K is the read store key (`{name}:...`) in UTF-8 with each 0x00 byte written as 00 FF, ended by
 * 00 00. No K is a prefix of another, so the range [K, K with its last byte 01) holds the entries
 * of that key and of no other ("a" vs "a b" or "a\0"). Every K of a projection starts with the
 * bytes of `{name}:` (they hold no 0x00), so a projection is one range too (drop, dump).
 * S is the score in 8 bytes that sort as the numbers do: IEEE 754 big-endian with the sign bit set
 * for positives and every bit flipped for negatives; -0 is stored as 0, as Redis does.
 *
 * T(x) is the UTF-8 of the member or field name. An LMDB key holds at most 1978 bytes, and the
 * port allows members and field names of any length: when K + S + x would be longer, T(x) is cut
 * to the room left, its last 17 bytes replaced by ff and a hash of x (ff never occurs in UTF-8), and
 * the whole x is kept in the value (scores: after S; order: the value; fields: the name's JSON,
 * a newline, then the field's JSON). Members still sort by their bytes, except two cut members of
 * one score with the same first ~1900 bytes, which sort by hash. A key whose K leaves less than
 * MIN_TAIL bytes for T is refused by prepareBatch, which aborts its batch's transaction, and read as empty.
 *
 * Why not lmdb-js's array keys (ordered-binary): they separate elements with a 0x00 byte and write
 * strings of 64 characters or more raw, so ["x".repeat(64), "b"] and ["x".repeat(64) + "\0b"] are
 * one LMDB key.
 *
 * Members of one score sort by their UTF-8 bytes, which is Redis's order; the port's
 * compareEntries (UTF-16 code units) agrees for members without characters above U+D7FF.
 */
import { createHash } from "node:crypto";
import type { Database, RootDatabase } from "lmdb";
import type { Write } from "./port.js";
import { encodeFields } from "./keys-and-cursors.js";

export interface Meta {
  /** Decimal; null while the projection only carries a serving mark (marked on an empty log). */
  checkpoint: string | null;
  serving: boolean;
  /** Which log the model was built from, written with the checkpoint (port.ts: Origin). */
  log?: string;
  event?: string;
}

export interface LmdbDatabases {
  fields: Database<string, Uint8Array>;
  scores: Database<Uint8Array, Uint8Array>;
  order: Database<Uint8Array, Uint8Array>;
  sizes: Database<number, Uint8Array>;
  meta: Database<Meta, Uint8Array>;
}

export function openDatabases(env: RootDatabase): LmdbDatabases {
  const binary = { keyEncoding: "binary", encoding: "binary" } as const;
  return {
    fields: env.openDB<string, Uint8Array>({ name: "fields", keyEncoding: "binary", encoding: "string" }),
    scores: env.openDB<Uint8Array, Uint8Array>({ name: "scores", ...binary }),
    order: env.openDB<Uint8Array, Uint8Array>({ name: "order", ...binary }),
    sizes: env.openDB<number, Uint8Array>({ name: "sizes", keyEncoding: "binary" }),
    meta: env.openDB<Meta, Uint8Array>({ name: "meta", keyEncoding: "binary" }),
  };
}

export const MAX_KEY_BYTES = 1978;
export const EMPTY = Buffer.alloc(0);

/** K: the key's UTF-8, 0x00 escaped as 00 FF, ended by 00 00. */
export function encodeKey(key: string): Buffer {
  const utf8 = Buffer.from(key, "utf8");
  let zeros = 0;
  for (let i = utf8.indexOf(0); i >= 0; i = utf8.indexOf(0, i + 1)) zeros++;
  const out = Buffer.alloc(utf8.length + zeros + 2); // zero-filled: ends with 00 00
  if (zeros === 0) utf8.copy(out);
  else {
    for (let i = 0, o = 0; i < utf8.length; i++) {
      out[o++] = utf8[i]!;
      if (utf8[i] === 0) out[o++] = 0xff;
    }
  }
  return out;
}

/** The key back from the start of an LMDB key, and where its K ends. */
export function decodeKey(bytes: Uint8Array): { key: string; end: number } {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0) out.push(bytes[i]!);
    else if (bytes[i + 1] !== 0xff) return { key: Buffer.from(out).toString("utf8"), end: i + 2 };
    else {
      out.push(0);
      i++;
    }
  }
  throw new RangeError("read store: an LMDB key without its end mark");
}

/** The end (exclusive) of everything that starts with `prefix`: its last byte plus one. */
export function prefixEnd(prefix: Uint8Array): Buffer {
  const end = Buffer.from(prefix);
  end[end.length - 1]! += 1; // a K ends with 00, `{name}:` with ':': never 0xff
  return end;
}

export function scoreBytes(score: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(score === 0 ? 0 : score);
  if (b[0]! & 0x80) for (let i = 0; i < 8; i++) b[i] = ~b[i]! & 0xff;
  else b[0]! |= 0x80;
  return b;
}

const scratch = Buffer.alloc(8);
export function readScore(bytes: Uint8Array, offset = 0): number {
  const negative = (bytes[offset]! & 0x80) === 0;
  for (let i = 0; i < 8; i++) scratch[i] = negative ? ~bytes[offset + i]! & 0xff : bytes[offset + i]!;
  if (!negative) scratch[0]! &= 0x7f;
  return scratch.readDoubleBE(0);
}

export const join = (...parts: Uint8Array[]): Buffer => Buffer.concat(parts);
// lmdb-js returns binary keys as Uint8Arrays; Node's own UTF-8 decoder (behind Buffer#toString,
// also used by lmdb-js and msgpackr) reads them without making a Buffer first, 4 times faster.
const utf8Slice = (Buffer.prototype as unknown as { utf8Slice(this: Uint8Array, start: number, end: number): string }).utf8Slice;
export const utf8 = (bytes: Uint8Array, start = 0): string => utf8Slice.call(bytes, start, bytes.length);

const HASH_BYTES = 16;
/** The least room a key must leave for T (so a cut T keeps some of x before its ff and hash). */
const MIN_TAIL = 64;

/** Bytes an entry of a K this long has for T(x) (order entries also hold S; the others use the same room). */
const room = (kLength: number) => MAX_KEY_BYTES - 8 - kLength;

/** T(x), and x itself when T is cut (it must then be kept in the value). */
export function tailOf(k: Uint8Array, x: Buffer): { tail: Buffer; cut?: Buffer } {
  const r = room(k.length);
  if (x.length <= r) return { tail: x };
  const hash = createHash("sha256").update(x).digest().subarray(0, HASH_BYTES);
  return { tail: join(x.subarray(0, r - HASH_BYTES - 1), Buffer.from([0xff]), hash), cut: x };
}

/** Whether the T starting at `start` of an entry of a K `kLength` long is cut. */
export function isCut(entry: Uint8Array, kLength: number, start: number): boolean {
  const r = room(kLength);
  return entry.length - start === r && entry[start + r - HASH_BYTES - 1] === 0xff;
}

/** A field's value as stored, and back: a cut field keeps its name in front. */
export const fieldValue = (cut: Buffer | undefined, json: string): string => (cut ? `${JSON.stringify(cut.toString("utf8"))}\n${json}` : json);
export function readField(entry: Uint8Array, kLength: number, value: string): [string, unknown] {
  if (!isCut(entry, kLength, kLength)) return [utf8(entry, kLength), JSON.parse(value)];
  const nl = value.indexOf("\n");
  return [JSON.parse(value.slice(0, nl)) as string, JSON.parse(value.slice(nl + 1))];
}

/** The member of an order entry (K + S + T), from its value when T is cut. */
export function orderMember(order: LmdbDatabases["order"], entry: Uint8Array, kLength: number): string {
  return isCut(entry, kLength, kLength + 8) ? utf8(order.get(entry)!) : utf8(entry, kLength + 8);
}

/** A write with its keys encoded: K of each key, the member or field names as UTF-8. */
export type Prepared =
  | { op: "put"; k: Buffer; fields: Array<[Buffer, string]> }
  | { op: "unset"; k: Buffer; fields: Buffer[] }
  | { op: "del"; k: Buffer }
  | { op: "zadd"; k: Buffer; member: Buffer; score: number; nx: boolean }
  | { op: "zrem"; k: Buffer; member: Buffer }
  | { op: "index"; index: string; k: Buffer; member: Buffer; value: string | null; family: Buffer | null; order: Buffer };

/** K, or undefined when the key leaves LMDB no room for its entries (nothing can be stored under it). */
export function readableKey(key: string): Buffer | undefined {
  const k = encodeKey(key);
  return room(k.length) >= MIN_TAIL ? k : undefined;
}

/**
 * Encodes a validated batch inside its transaction, before the first write (lmdb-writes.ts): fields as JSON (a value that is not JSON
 * throws here), keys as K; a key too long to leave room for its entries is refused with a RangeError.
 */
export function prepareBatch(writes: readonly Write[]): Prepared[] {
  const ks = new Map<string, Buffer>(); // a batch writes few keys many times
  const K = (key: string): Buffer => {
    let k = ks.get(key);
    if (k) return k;
    k = readableKey(key);
    if (!k) {
      const shown = JSON.stringify(key.length > 100 ? `${key.slice(0, 100)}...` : key);
      throw new RangeError(`read store key ${shown} is too long for LMDB: ${Buffer.byteLength(key)} bytes, at most ${room(2) - MIN_TAIL}`);
    }
    ks.set(key, k);
    return k;
  };
  return writes.map((w): Prepared => {
    switch (w.op) {
      case "put":
        return { op: "put", k: K(w.key), fields: encodeFields(w.key, w.fields).map(([f, json]) => [Buffer.from(f), json]) };
      case "unset":
        return { op: "unset", k: K(w.key), fields: w.fields.map((f) => Buffer.from(f)) };
      case "del":
        return { op: "del", k: K(w.key) };
      case "zadd":
        return { op: "zadd", k: K(w.key), member: Buffer.from(w.member), score: w.score, nx: w.nx === true };
      case "zrem":
        return { op: "zrem", k: K(w.key), member: Buffer.from(w.member) };
      case "index": {
        const family = w.value === null ? null : K(`${w.index}:${w.value}`);
        return { op: "index", index: w.index, k: K(w.index), member: Buffer.from(w.member), value: w.value, family, order: K(w.order) };
      }
    }
  });
}

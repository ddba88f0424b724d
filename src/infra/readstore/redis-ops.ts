/**
 * Writes the ops of the Redis apply script as one MessagePack array, which the script decodes with
 * cmsgpack (built into Redis's Lua). MessagePack strings are length-prefixed bytes: a field value,
 * already JSON, goes out as is, where a JSON payload would escape every quote of it again (in node)
 * and unescape it (in cjson). Redis decodes it in half the time cjson needs.
 *
 * The bytes go straight into a reused buffer (no string of the whole payload for V8 to collect),
 * then into the command's buffer, behind the keys (`command`).
 *
 * Only what the script reads: op codes, indexes and counts (unsigned integers), and strings.
 */

/** Op codes of the apply script (see redis-apply.ts). */
export const OP = { del: 1, hset: 2, hdel: 3, zadd: 4, zaddNx: 5, zrem: 6 } as const;

/** Buffer's own UTF-8 writer (what `write` calls after checking its arguments); returns the bytes written. */
type Utf8Writer = Buffer & { utf8Write(s: string, offset: number): number };

const digitsOf = (n: number) => (n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : String(n).length);

/** Writes `n` (a whole number >= 0) in decimal at `p`; returns where it ends. */
function decimalAt(b: Buffer, p: number, n: number): number {
  const end = p + digitsOf(n);
  for (let i = end - 1; i >= p; i--) {
    b[i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
  return end;
}

/**
 * Writes `s` as a RESP bulk string ($<bytes>\r\n<s>\r\n) at `p`; returns where it ends. The
 * string goes first, where its header would end if it is ASCII (bytes = chars, as keys are); if
 * it is not, it moves to where its header really ends.
 */
function bulkAt(b: Utf8Writer, p: number, s: string): number {
  const guess = p + 3 + digitsOf(s.length);
  const len = b.utf8Write(s, guess);
  const at = p + 3 + digitsOf(len);
  if (at !== guess) b.copyWithin(at, guess, guess + len);
  b[p] = 36; // $
  decimalAt(b, p + 1, len);
  b[at - 2] = 13;
  b[at - 1] = 10;
  b[at + len] = 13;
  b[at + len + 1] = 10;
  return at + len + 2;
}

export class OpsWriter {
  private buf = Buffer.allocUnsafeSlow(1 << 20) as Utf8Writer;
  private pos = 5;
  private items = 0;

  reset(): void {
    this.pos = 5; // room for the array32 header
    this.items = 0;
  }

  /** Where the writer is: `rewind` takes back what was written since. */
  mark(): { pos: number; items: number } {
    return { pos: this.pos, items: this.items };
  }

  rewind(mark: { pos: number; items: number }): void {
    this.pos = mark.pos;
    this.items = mark.items;
  }

  /** An unsigned integer below 2^32. */
  uint(n: number): void {
    this.room(5);
    const b = this.buf;
    if (n < 128) b[this.pos++] = n;
    else if (n < 65536) {
      b[this.pos] = 0xcd;
      b[this.pos + 1] = n >>> 8;
      b[this.pos + 2] = n & 255;
      this.pos += 3;
    } else {
      b[this.pos] = 0xce;
      b.writeUInt32BE(n, this.pos + 1);
      this.pos += 5;
    }
    this.items++;
  }

  /** A count (below 2^16) written later with `setCount`. Returns where it is. */
  countSlot(): number {
    this.room(3);
    const at = this.pos;
    this.buf[at] = 0xcd;
    this.pos += 3;
    this.items++;
    return at;
  }

  setCount(at: number, n: number): void {
    this.buf[at + 1] = n >>> 8;
    this.buf[at + 2] = n & 255;
  }

  /**
   * A score, as a decimal string: Redis would format a Lua number with printf("%.17g"), which
   * costs more than the rest of a ZADD. Positions (whole numbers) are written digit by digit,
   * anything else as String(n) (exact: the shortest round-trip form).
   */
  score(n: number): void {
    if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER && Number.isInteger(n))) {
      this.str(String(n));
      return;
    }
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    this.room(2 + digits);
    const b = this.buf;
    b[this.pos] = 0xd9; // str8
    b[this.pos + 1] = digits;
    let x = n;
    for (let i = this.pos + 1 + digits; i > this.pos + 1; i--) {
      b[i] = 48 + (x % 10);
      x = Math.floor(x / 10);
    }
    this.pos += 2 + digits;
    this.items++;
  }

  str(s: string): void {
    const n = s.length;
    // UTF-8 takes at most 3 bytes per UTF-16 unit. The header is chosen by that bound (a wider
    // header than needed is valid MessagePack), so the bytes are written once, in place.
    const head = n < 86 ? 2 : n < 21846 ? 3 : 5;
    this.room(head + n * 3);
    const b = this.buf;
    const at = this.pos;
    const len = b.utf8Write(s, at + head);
    if (head === 2) {
      b[at] = 0xd9; // str8
      b[at + 1] = len;
    } else if (head === 3) {
      b[at] = 0xda; // str16
      b[at + 1] = len >>> 8;
      b[at + 2] = len & 255;
    } else {
      b[at] = 0xdb; // str32
      b.writeUInt32BE(len, at + 1);
    }
    this.pos = at + head + len;
    this.items++;
  }

  /**
   * Writes the arguments of the apply command after the script, as RESP (numkeys, the keys, each
   * behind `keyPrefix`, `argv`, then the ops as the last argument), into `out` from `from` on; returns the buffer (a
   * bigger one when it did not fit) and where the arguments end.
   */
  command(keys: readonly string[], argv: readonly string[], out: Buffer, from: number, keyPrefix = ""): { argc: number; buf: Buffer; end: number } {
    const b = this.buf;
    b[0] = 0xdd; // array32
    b.writeUInt32BE(this.items, 1);
    const ops = this.pos;
    let bound = from + 48 + ops;
    for (const k of keys) bound += 16 + (keyPrefix.length + k.length) * 3;
    for (const a of argv) bound += 16 + a.length * 3;
    if (out.length < bound) out = Buffer.allocUnsafeSlow(Math.max(bound, out.length * 2));
    const o = out as Utf8Writer;
    let p = bulkAt(o, from, String(keys.length));
    for (const k of keys) p = bulkAt(o, p, keyPrefix === "" ? k : keyPrefix + k);
    for (const a of argv) p = bulkAt(o, p, a);
    o[p++] = 36; // $
    p = decimalAt(o, p, ops);
    o[p++] = 13;
    o[p++] = 10;
    b.copy(o, p, 0, ops);
    p += ops;
    o[p++] = 13;
    o[p++] = 10;
    return { argc: 1 + keys.length + argv.length + 1, buf: o, end: p };
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.pos + n)) as Utf8Writer;
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }
}

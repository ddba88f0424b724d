/**
 * The rules every ReadStore adapter shares (port.ts): projection key prefixes, batch checks and
 * field encoding, positions as strings, and range cursors and their order.
 */
import { CursorError, type Origin, type Write } from "./port.js";

/** The projection a key belongs to (`{name}:...`). */
export function projectionOfKey(key: string): string {
  const end = key.indexOf("}:");
  if (key[0] !== "{" || end < 2) throw new RangeError(`not a projection key: ${JSON.stringify(key)}`);
  return key.slice(1, end);
}

/** The distinct projections of some keys (usually one). */
export function projectionsOfKeys(keys: readonly string[]): string[] {
  const out: string[] = [];
  let last: string | undefined;
  for (const k of keys) {
    if (last !== undefined && k.startsWith(last, 1) && k.charCodeAt(last.length + 1) === 125 /* } */) continue;
    last = projectionOfKey(k);
    if (!out.includes(last)) out.push(last);
  }
  return out;
}

/**
 * Whether a batch at `checkpoint` would take the model back, or leave it where it is unguarded.
 * A batch may stay at the stored checkpoint only when it names that checkpoint as the one it
 * expects: writes that no event brings (retention's retractions on an idle log), from the writer
 * that holds the model.
 */
export const stillOrBack = (checkpoint: bigint, current: bigint, expected: bigint | null | undefined): boolean => checkpoint < current || (checkpoint === current && expected !== current);

/** A model stamped with another log than the batch's refuses it (applyBatch). */
export const otherLog = (stored: string | undefined | null, origin: Origin | undefined): boolean => origin !== undefined && stored != null && stored !== origin.log;

const NAME_RE = /^[a-z][a-z0-9-]{0,63}$/;

export function keyPrefix(projection: string): string {
  if (!NAME_RE.test(projection)) throw new RangeError(`bad projection name: ${JSON.stringify(projection)}`);
  return `{${projection}}:`;
}

export const metaKey = (projection: string): string => `${keyPrefix(projection)}@meta`;

/** 20 digits hold every unsigned 64-bit position; equal widths make string order numeric order. */
export function padPosition(p: bigint): string {
  if (p < 0n || p > 18446744073709551615n) throw new RangeError(`position out of range: ${p}`);
  return p.toString(10).padStart(20, "0");
}

/** Checks everything a batch could fail on before the first write, so adapters never half-apply. */
export function validateBatch(projection: string, writes: readonly Write[], checkpoint: bigint): void {
  const prefix = keyPrefix(projection);
  const meta = metaKey(projection);
  padPosition(checkpoint);
  const own = (key: unknown) => {
    if (typeof key !== "string" || !key.startsWith(prefix) || key === meta || key.length === prefix.length) {
      throw new RangeError(`projection ${projection} cannot write key ${JSON.stringify(key)}`);
    }
  };
  for (const w of writes) {
    switch (w.op) {
      case "put":
        own(w.key);
        break;
      case "unset":
      case "del":
        own(w.key);
        break;
      case "zadd":
        own(w.key);
        if (typeof w.member !== "string") throw new TypeError(`zadd ${w.key}: member must be a string`);
        if (!Number.isFinite(w.score)) throw new RangeError(`zadd ${w.key}: score must be finite`);
        break;
      case "zrem":
        own(w.key);
        break;
      case "index":
        own(w.index);
        own(w.order);
        if (w.value !== null && typeof w.value !== "string") throw new TypeError(`index ${w.index}: value must be a string or null`);
        break;
      default: {
        const never: never = w;
        throw new TypeError(`unknown write ${JSON.stringify(never)}`);
      }
    }
  }
}

/** The fields of a put, JSON-encoded; `undefined` fields are skipped. Throws on a non-JSON value. */
export function encodeFields(key: string, fields: Readonly<Record<string, unknown>>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const f in fields) {
    const v = fields[f];
    if (v === undefined) continue;
    const json = JSON.stringify(v);
    if (json === undefined) throw new TypeError(`field ${f} of ${key} is not JSON`);
    out.push([f, json]);
  }
  return out;
}

/** Sets a read doc's field: one named `__proto__` is a field like any other, not the doc's prototype. */
export function setDocField(doc: Record<string, unknown>, field: string, value: unknown): void {
  if (field === "__proto__") Object.defineProperty(doc, field, { value, enumerable: true, writable: true, configurable: true });
  else doc[field] = value;
}

/** Cursors are opaque to clients: base64url of "<score>:<member>". */
export function encodeCursor(score: number, member: string): string {
  return Buffer.from(`${String(score)}:${member}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): { score: number; member: string } {
  const raw = Buffer.from(cursor, "base64url").toString("utf8");
  const i = raw.indexOf(":");
  const score = i > 0 ? Number(raw.slice(0, i)) : Number.NaN;
  if (!Number.isFinite(score)) throw new CursorError(cursor);
  return { score, member: raw.slice(i + 1) };
}

/**
 * (score, member) order, as Redis sorts a sorted set. Members compare by UTF-16 code units, which
 * is Redis's byte order for every member without characters above U+D7FF (ids, names, hosts).
 */
export function compareEntries(sa: number, ma: string, sb: number, mb: string): number {
  if (sa !== sb) return sa < sb ? -1 : 1;
  return ma === mb ? 0 : ma < mb ? -1 : 1;
}

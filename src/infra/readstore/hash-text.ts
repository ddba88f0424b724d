import { flat } from "./flat-text.js";
import { setDocField } from "./keys-and-cursors.js";
import type { Doc } from "./port.js";

/**
 * How the in-memory store holds a hash, so that a fleet's models stay few objects on the heap (the
 * garbage collector's marking time follows the number of objects, not their bytes):
 *
 * - most hashes (a device, an ARQ: a dozen fields) are ONE string, the JSON object of their fields
 *   (`{"field":value,...}`), parsed when read;
 * - a hash being written (among the keys written lately, memory.ts), or with more than
 *   `FIELD_MAP_FROM` fields (an index's reverse hash names every member), is a map from field to
 *   its value, parsed and deeply frozen, so a write changes one field and reads share the values.
 *
 * Values are JSON as in Redis: what is read back equals `JSON.parse(JSON.stringify(value))`.
 */
export type FieldMap = Map<string, unknown>;
export type HashValue = string | FieldMap;

/** Above this many fields a hash stays a map of fields. */
export const FIELD_MAP_FROM = 64;

/**
 * The hash's fields: a new object at each call. From the text, all of it the caller's; from a map
 * of fields, its values are shared and frozen (a caller that tried to change one would throw).
 */
export function docOf(h: HashValue): Doc {
  if (typeof h === "string") return JSON.parse(h) as Doc;
  const doc: Doc = {};
  for (const [f, value] of h) setDocField(doc, f, value);
  return doc;
}

/** The hash as the JSON object of its fields (a snapshot's content, a settled hash). */
export function textOf(h: HashValue): string {
  return typeof h === "string" ? h : JSON.stringify(docOf(h));
}

/**
 * A hash's text this long or longer is parsed when it is taken out of a snapshot's bytes, to tell
 * whether it has more than FIELD_MAP_FROM fields and is kept as a map: an index's reverse hash of
 * every device is megabytes, which each write of the index would otherwise parse again. A shorter
 * text with that many fields stays text until it is written.
 */
export const MAP_TEXT_FROM = 16 * 1024;

/** A hash's text, as taken out of a snapshot's bytes, in the form the store keeps it. */
export function keptHash(text: string): HashValue {
  if (text.length < MAP_TEXT_FROM) return text;
  const fields = fieldMapOf(text);
  return fields.size > FIELD_MAP_FROM ? fields : flat(text);
}

/** The hash as a map of fields, to be changed. */
export function fieldMapOf(h: HashValue): FieldMap {
  if (h instanceof Map) return h;
  const doc = JSON.parse(h) as Doc;
  const fields: FieldMap = new Map();
  for (const f of Object.keys(doc)) fields.set(f, deepFreeze(doc[f]));
  return fields;
}

/** The value a field's JSON holds, frozen to be shared by every read. */
export function frozenValue(json: string): unknown {
  return deepFreeze(JSON.parse(json));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * A read model's key as a line of its snapshot (memory-snapshots.ts): `["h",<key>,{fields}]` or
 * `["z",<key>,[[member, score], ...]]`. A large key's line (an index of every device: tens of
 * thousands of fields, megabytes of text) is given in pieces, each made only once the one before
 * is written (snapshot-file.ts), so no piece holds the event loop more than a few milliseconds.
 */
import { FieldsAtCapture, rawText, type RawJson } from "./memory-capture.js";
import type { SnapshotLine } from "./snapshot-file.js";

/** Fields or members in one piece of a large key's line. */
export const PIECE = 1_000;

/** A key's line; a large hash's (captured field by field) or sorted set's in pieces of the same text. */
export function entryLine(kind: "h" | "z", key: string, content: string | unknown[] | RawJson | FieldsAtCapture): SnapshotLine {
  if (content instanceof FieldsAtCapture) return pieces(`["${kind}",${JSON.stringify(key)},{`, content, ([f, v]) => `${JSON.stringify(f)}:${JSON.stringify(v)}`, "}]");
  if (Array.isArray(content)) {
    if (content.length <= PIECE) return JSON.stringify([kind, key, content]);
    return pieces(`["${kind}",${JSON.stringify(key)},[`, content, (entry) => JSON.stringify(entry), "]]");
  }
  return `["${kind}",${JSON.stringify(key)},${typeof content === "string" ? content : rawText(content as RawJson)}]`;
}

function* pieces<T>(open: string, items: Iterable<T>, text: (item: T) => string, close: string): Generator<string> {
  let piece = open;
  let n = 0;
  for (const item of items) {
    piece += (n === 0 ? "" : ",") + text(item);
    if (++n % PIECE === 0) {
      yield piece;
      piece = "";
    }
  }
  yield piece + close;
}

/**
 * A key's snapshot line (src/infra/readstore/snapshot-lines.ts): a small key's is one string; a
 * large hash's (captured field by field) and a large sorted set's come in pieces of at most PIECE fields
 * or members, which together are the same text.
 */
import { describe, expect, it } from "vitest";
import { FieldsAtCapture } from "../../src/infra/readstore/memory-capture.js";
import { entryLine, PIECE } from "../../src/infra/readstore/snapshot-lines.js";

const joined = (line: string | Iterable<string>) => (typeof line === "string" ? line : [...line].join(""));

describe("a key's snapshot line", () => {
  it("a large hash's comes in pieces of at most PIECE fields: the text of its fields", () => {
    const fields = new Map<string, unknown>(Array.from({ length: 2 * PIECE + 7 }, (_, i) => [`dev-${i}`, { arq: `arq-${i}`, quoted: 'a "b" \\ é' }]));
    fields.set("__proto__", 1);
    const line = entryLine("h", '{arqs}:by-"device"', new FieldsAtCapture(fields));
    expect(typeof line).not.toBe("string");
    const pieces = [...(line as Iterable<string>)];
    expect(pieces).toHaveLength(3);
    for (const p of pieces) expect(p.match(/"dev-\d+":/g)?.length ?? 0).toBeLessThanOrEqual(PIECE);
    const parsed = JSON.parse(pieces.join("")) as [string, string, Record<string, unknown>];
    expect(parsed[0]).toBe("h");
    expect(parsed[1]).toBe('{arqs}:by-"device"');
    expect(Object.keys(parsed[2])).toHaveLength(2 * PIECE + 8);
    expect(parsed[2]["dev-5"]).toEqual({ arq: "arq-5", quoted: 'a "b" \\ é' });
    expect(Object.getOwnPropertyDescriptor(parsed[2], "__proto__")?.value).toBe(1);
  });

  it("a large sorted set's comes in pieces, a small one's in one string, the same text as JSON.stringify", () => {
    const large = Array.from({ length: PIECE + 1 }, (_, i) => [`m-${i}`, i / 3]);
    const line = entryLine("z", "{arqs}:order", large);
    expect(typeof line).not.toBe("string");
    expect(joined(line)).toBe(JSON.stringify(["z", "{arqs}:order", large]));
    const small = large.slice(0, 3);
    expect(entryLine("z", "{arqs}:order", small)).toBe(JSON.stringify(["z", "{arqs}:order", small]));
    expect(entryLine("h", "{arqs}:a", '{"n":1}')).toBe('["h","{arqs}:a",{"n":1}]');
  });
});

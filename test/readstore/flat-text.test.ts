/**
 * flat() makes the store's long-kept strings one piece (flat-text.ts): it must never change what
 * they say, whatever their characters.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { flat } from "../../src/infra/readstore/flat-text.js";

describe("flat", () => {
  it("keeps the text as it is: built by joining, JSON, any code points, lone surrogates and text that normalization would change", () => {
    const decomposed = "caf\u0065\u0301"; // "café" as e + a combining accent: NFC would make it one code point
    expect(flat(`{arqs}:${decomposed}`)).toBe(`{arqs}:${decomposed}`);
    expect(flat(`{arqs}:${"\ud800"}x`)).toBe("{arqs}:\ud800x");
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" }), { maxLength: 5 }), (parts) => {
        const joined = parts.reduce((a, b) => a + b, "{m}:");
        expect(flat(joined)).toBe(joined);
        const json = JSON.stringify(parts);
        expect(flat(json)).toBe(json);
      }),
    );
  });
});

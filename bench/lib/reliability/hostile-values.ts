/**
 * Values a hostile or careless client sends, as fast-check arbitraries: strings (empty, unicode,
 * lone surrogates, control characters, huge), identifiers (uuids, near-uuids, known ones), numbers
 * at the edges, JSON nested deep or shaped like a device profile's groups, forged cursors. Known
 * values (a real host, profile, ARQ) come from a pool, so that some requests reach deep code.
 */
import fc from "fast-check";
import { looksLikeStack } from "./answer-checks.js";

/** Real names and ids of the service under test, so that requests also reach the paths behind the lookups. */
export interface Pool {
  /** Every uuid below, for an argument that can name any object. */
  anyUuids: string[];
  hostnames: string[];
  profileNames: string[];
  profileUuids: string[];
  arqUuids: string[];
  instanceUuids: string[];
  rpUuids: string[];
  deviceUuids: string[];
  deployableUuids: string[];
  attributeUuids: string[];
  cursors: string[];
  positions: string[];
  streams: string[];
}

export const emptyPool = (): Pool => ({
  anyUuids: [],
  hostnames: ["compute1"],
  profileNames: [],
  profileUuids: [],
  arqUuids: [],
  instanceUuids: [],
  rpUuids: [],
  deviceUuids: [],
  deployableUuids: [],
  attributeUuids: [],
  cursors: [],
  positions: [],
  streams: [],
});

// An answer may echo what was sent: generated text never looks like a stack trace, so an echo cannot pass for one.
const safe = (a: fc.Arbitrary<string>) => a.filter((s) => !looksLikeStack(s));

const SPECIAL = [
  "",
  " ",
  "\u0000",
  "\t\n\r",
  "null",
  "undefined",
  "NaN",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "'; DROP TABLE arqs; --",
  "../../etc/passwd",
  "%00%ff",
  "\uD800",
  "\uDFFF\uD800",
  "😀🚀",
  "ä".repeat(300),
  "a".repeat(255),
  "a".repeat(256),
  "compute1\u0000",
  "COMPUTE1",
  "{fpga}:arq",
  "*",
  "?",
  "\u202Eevil",
];

/** Hostile strings up to a few hundred characters. */
export const shortHostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 4, arbitrary: safe(fc.string({ unit: "binary", maxLength: 40 })) },
  { weight: 3, arbitrary: safe(fc.string({ unit: "grapheme", maxLength: 40 })) },
  { weight: 2, arbitrary: fc.uuid() },
);

/** Hostile strings, now and then huge (up to 300,000 characters). */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 13, arbitrary: shortHostileString },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 300_000 }).map((n) => "x".repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 256, max: 5_000 }).map((n) => "é".repeat(n)) },
);

const NEAR_UUIDS = [
  "x",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE",
  "123e4567-e89b-12d3-a456-42661417400",
  "123e4567-e89b-12d3-a456-4266141740000",
  "123e4567e89b12d3a456426614174000",
  "{123e4567-e89b-12d3-a456-426614174000}",
  "123e4567-e89b-12d3-a456-42661417400g",
];

/** Builds an arbitrary once per list of known values (building one, a regex's in particular, costs more than drawing from it). */
function memo<T>(build: (known: string[], big: boolean) => fc.Arbitrary<T>): (known: string[], big?: boolean) => fc.Arbitrary<T> {
  const cache = new WeakMap<string[], Map<boolean, fc.Arbitrary<T>>>();
  return (known, big = true) => {
    let byBig = cache.get(known);
    if (!byBig) cache.set(known, (byBig = new Map()));
    let a = byBig.get(big);
    if (!a) byBig.set(big, (a = build(known, big)));
    return a;
  };
}

const nameLike = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);

/** An identifier: known, random, almost a uuid, or any hostile string. */
export const idFrom = memo((known, big): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: known.length ? 5 : 0, arbitrary: fc.constantFrom(...(known.length ? known : ["-"])) },
    { weight: 3, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: fc.constantFrom(...NEAR_UUIDS) },
    { weight: 2, arbitrary: big ? hostileString : shortHostileString },
  ),
);

export const nameFrom = memo((known, big): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: known.length ? 4 : 0, arbitrary: fc.constantFrom(...(known.length ? known : ["-"])) },
    { weight: 2, arbitrary: nameLike },
    { weight: 3, arbitrary: big ? hostileString : shortHostileString },
  ),
);

export const hostileInt: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -3, max: 12 }),
  fc.constantFrom(-1, 0, 1, 99, 100, 101, 999, 1000, 1001, 1024, 1025, 65_535, 2 ** 31 - 1, -(2 ** 31)),
  fc.integer(),
);

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64url");

/** Cursors and log positions: real ones, forged ones, and junk. */
const cursors = new WeakMap<Pool, fc.Arbitrary<string>>();
export const cursorFrom = (pool: Pool): fc.Arbitrary<string> => {
  let a = cursors.get(pool);
  if (!a) cursors.set(pool, (a = buildCursor(pool)));
  return a;
};

const buildCursor = (pool: Pool): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: pool.cursors.length ? 3 : 0, arbitrary: fc.constantFrom(...(pool.cursors.length ? pool.cursors : ["-"])) },
    { weight: pool.positions.length ? 2 : 0, arbitrary: fc.constantFrom(...(pool.positions.length ? pool.positions : ["-"])) },
    { weight: 3, arbitrary: fc.constantFrom("", "xyz", "MQ==", "-1", "0", "1e400", "99999999999999999999999", "NaN", "Infinity", "=", "====") },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom("0", "-5", "1e308", "9007199254740993", "0.5", "Infinity", "x", ""), fc.oneof(hostileString, fc.uuid()))
        .map(([score, member]) => b64(`${score}:${member}`)),
    },
    { weight: 1, arbitrary: hostileString },
  );

/**
 * JSON nested `depth` levels deep, as objects or arrays. Deep values would overflow the client's
 * own stack (JSON.stringify recurses, and fails near 5,000 levels), so it stands in the generated
 * value as a placeholder that expandDeep() turns into text when the request is written.
 */
export const deepJson = (depth: number, arrays: boolean): string => `\u0001DEEP:${depth}:${arrays ? 1 : 0}\u0001`;

const DEEP_IN_JSON = /"\\u0001DEEP:(\d+):([01])\\u0001"/g;
const DEEP_RAW = /^\u0001DEEP:(\d+):([01])\u0001$/;

/** The JSON text with each deepJson placeholder written out. */
export function expandDeep(json: string): string {
  return json.replace(DEEP_IN_JSON, (_, depth: string, arrays: string) => nested(Number(depth), arrays === "1", "{\"k\": "));
}

/** A deepJson placeholder as a GraphQL literal, or undefined for any other value. */
export function deepLiteral(value: unknown): string | undefined {
  const m = typeof value === "string" ? DEEP_RAW.exec(value) : null;
  return m ? nested(Number(m[1]), m[2] === "1", "{k: ") : undefined;
}

const nested = (depth: number, arrays: boolean, open: string) =>
  arrays ? `${"[".repeat(depth)}"leaf"${"]".repeat(depth)}` : `${open.repeat(depth)}"leaf"${"}".repeat(depth)}`;

const groupKey = fc.oneof(
  fc.constantFrom("resources:FPGA", "resources:GPU", "resources1:FPGA", "trait:CUSTOM_FAKE_DEVICE", "accel:bitstream_id", "accel:function_id", "resources:", "trait:", "accel:"),
  hostileString,
);
const groupValue = fc.oneof(fc.constantFrom("1", "2", "0", "-1", "1001", "required", "forbidden", "maybe", "1.5"), hostileString, fc.integer(), fc.constant(null), fc.boolean());

/** A device profile's groups: well-formed, almost, or anything. */
export const profileGroups: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constant([{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }]) },
  { weight: 4, arbitrary: fc.array(fc.dictionary(groupKey, groupValue, { maxKeys: 5 }), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.integer({ min: 99, max: 150 }).map((n) => Array.from({ length: n }, () => ({ "resources:FPGA": "1" }))) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 5_000 }).map((n) => [{ "resources:FPGA": "1", deep: deepJson(n, n % 2 === 0) }]) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
);

/** Any JSON value, sometimes very deep. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 2, arbitrary: fc.constant({ domain: "0000", bus: "0c", device: "00", function: "1" }) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 5_000 }).map((n) => deepJson(n, n % 2 === 1)) },
);

/** A value of the wrong kind for whatever was asked. */
export const wrongKind: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1.5, 2 ** 53, "", "x", [], {}, [null], { a: 1 }),
  fc.jsonValue({ maxDepth: 2 }),
);

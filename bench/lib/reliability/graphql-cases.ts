/**
 * GraphQL requests generated from the schema itself, for every query, mutation and subscription:
 * well-typed variables with hostile values, inlined literals, aliases, inline and named fragments,
 * deep selections; and malformed ones: wrong variable types, missing or undeclared variables,
 * unknown fields, several operations, truncated or junk documents, bodies that are not requests.
 * A new operation in the schema is fuzzed without a change here.
 */
import fc from "fast-check";
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from "graphql";
import { anyJson, cursorFrom, deepJson, deepLiteral, expandDeep, hostileInt, hostileString, idFrom, shortHostileString, nameFrom, profileGroups, wrongKind, type Pool } from "./hostile-values.js";
import type { Caller } from "./wire.js";
import { WHO } from "./tokens.js";

export type RootKind = "query" | "mutation" | "subscription";

export interface GraphqlCase {
  who: Caller;
  /** The request body as sent: JSON text (or not, for a malformed body). */
  text: string;
  /** Which root field it aims at, e.g. "mutation.bindAcceleratorRequests". */
  target: string;
  kind: RootKind;
  /** How it was made ("variables", "literals", "wrong-types", "junk", ...). */
  style: string;
}

export interface RootField {
  kind: RootKind;
  field: GraphQLField<unknown, unknown>;
}

/** Every query, mutation and subscription of the schema. */
export function rootFields(schema: GraphQLSchema): RootField[] {
  const out: RootField[] = [];
  for (const [kind, type] of [
    ["query", schema.getQueryType()],
    ["mutation", schema.getMutationType()],
    ["subscription", schema.getSubscriptionType()],
  ] as const) {
    for (const field of Object.values(type?.getFields() ?? {})) out.push({ kind, field });
  }
  return out;
}

type G = fc.GeneratorValue;
const chance = (g: G, p: number) => g(fc.integer, { min: 0, max: 9_999 }) < p * 10_000;
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.integer, { min: 0, max: items.length - 1 })]!;

const DATE = fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), shortHostileString);
const DIGEST = fc.oneof(fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 }).map((h) => `v1:${h}`), shortHostileString);
const OPERATION = fc.oneof(fc.constantFrom("reboot", "shelve", "delete", "resize", "live-migrate", "unshelve", "evacuate"), shortHostileString);

/** What one request may still spend on big values (characters): a few huge strings, not thousands. */
interface Budget {
  chars: number;
}

/** A value for a scalar, chosen by the argument or field name where it says what it holds. */
function scalarValue(g: G, scalar: string, name: string, pool: Pool, budget: Budget): unknown {
  const n = name.toLowerCase();
  const big = budget.chars > 0;
  const str = (a: fc.Arbitrary<string>) => {
    const v = g(() => a);
    budget.chars -= v.length;
    return v;
  };
  if (n === "after") return str(cursorFrom(pool));
  if (scalar === "Int" || scalar === "Float") return g(() => hostileInt);
  if (scalar === "Boolean") return g(fc.boolean);
  if (scalar === "JSON") {
    if (!big) return g(() => fc.jsonValue({ maxDepth: 2 }));
    budget.chars -= 5_000;
    return n === "groups" ? g(() => profileGroups) : g(() => anyJson);
  }
  if (scalar === "DateTime") return str(DATE);
  if (n.includes("hostname")) return str(nameFrom(pool.hostnames, big));
  if (n === "arquuid" || n === "arquuids" || n === "tag") return str(idFrom(pool.arqUuids, big));
  if (n.includes("instance")) return str(idFrom(pool.instanceUuids, big));
  if (n.includes("rpuuid")) return str(idFrom(pool.rpUuids, big));
  if (n === "stream") return str(nameFrom(pool.streams, big));
  if (n === "digest") return str(DIGEST);
  if (n === "operation") return str(OPERATION);
  if (n.includes("profile") || n === "names" || n === "name") return str(nameFrom(pool.profileNames, big));
  if (scalar === "ID" || n === "uuid" || n === "uuids") {
    return str(idFrom(pool.anyUuids, big));
  }
  return str(big ? hostileString : shortHostileString);
}

/** A value for an input type; `wrongRate` is the chance, at each node, of a value of the wrong kind. */
function inputValue(g: G, type: GraphQLInputType, name: string, pool: Pool, wrongRate: number, budget: Budget, depth = 0): unknown {
  if (wrongRate > 0 && chance(g, wrongRate)) return g(() => wrongKind);
  if (isNonNullType(type)) return inputValue(g, type.ofType, name, pool, wrongRate, budget, depth);
  if (isListType(type)) {
    const inner = getNamedType(type);
    if (depth === 0 && chance(g, 0.04) && isScalarType(inner) && inner.name === "ID") return g(fc.array, fc.uuid(), { minLength: 1_000, maxLength: 1_050 });
    // A long list at the top only: lists of lists of input objects grow as the product of their lengths.
    const len = g(fc.integer, { min: 0, max: depth === 0 && chance(g, 0.1) ? 120 : 3 });
    const items = Array.from({ length: len }, () => inputValue(g, type.ofType, name, pool, wrongRate, len > 3 ? { chars: 0 } : budget, depth + 1));
    return items;
  }
  if (isEnumType(type)) {
    return chance(g, 0.9) ? pick(g, type.getValues()).value : g(() => shortHostileString);
  }
  if (isInputObjectType(type)) {
    const obj: Record<string, unknown> = {};
    for (const f of Object.values(type.getFields())) {
      const required = isNonNullType(f.type) && f.defaultValue === undefined;
      if (required ? !chance(g, wrongRate) : chance(g, depth > 2 ? 0.2 : 0.5)) obj[f.name] = inputValue(g, f.type, f.name, pool, wrongRate, budget, depth + 1);
    }
    if (chance(g, wrongRate)) obj[g(() => shortHostileString).slice(0, 40) || "extra"] = g(() => wrongKind);
    return obj;
  }
  if (isScalarType(type)) return scalarValue(g, type.name, name, pool, budget);
  return null;
}

/** A GraphQL literal for a JS value (enums as names when `enumName` says so); invalid input makes invalid literals, as it should. */
function literal(value: unknown, type: GraphQLInputType | undefined): string {
  const named = type ? getNamedType(type) : undefined;
  const deep = deepLiteral(value);
  if (deep !== undefined) return deep;
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return isEnumType(named) && /^[_A-Za-z][_0-9A-Za-z]*$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) {
    const inner = type && isListType(getNullableType(type)) ? (getNullableType(type) as { ofType: GraphQLInputType }).ofType : type;
    return `[${value.map((v) => literal(v, inner)).join(", ")}]`;
  }
  const fields = named && isInputObjectType(named) ? named.getFields() : {};
  const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${/^[_A-Za-z][_0-9A-Za-z]*$/.test(k) ? k : "_bad"}: ${literal(v, fields[k]?.type)}`);
  return `{${entries.join(", ")}}`;
}

interface Doc {
  fragments: string[];
  nextName: number;
}

/** A selection set for an output type, at most `depth` levels deep. */
function selection(g: G, type: GraphQLOutputType, depth: number, doc: Doc, narrow = false): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return "";
  if (!isObjectType(named)) return "{ __typename }";
  if (depth <= 0) return "{ __typename }";
  const fields = Object.values(named.getFields()).filter((f) => !f.args.some((a) => isNonNullType(a.type)));
  // A deep selection follows one path (Deployable.parent.parent...); a wide one takes a few fields a level.
  const objects = fields.filter((f) => !isLeafType(getNamedType(f.type)));
  // Indices, not the fields: fast-check compares the arguments it is given, and schema objects are cyclic.
  const indices = g(fc.subarray, [...fields.keys()], { minLength: 1, maxLength: Math.min(depth > 2 ? 3 : 5, fields.length) });
  const chosen = narrow && objects.length ? [pick(g, objects)] : indices.map((i) => fields[i]!);
  const parts = chosen.map((f) => {
    const alias = chance(g, 0.15) ? `a${doc.nextName++}: ` : "";
    return `${alias}${f.name} ${selection(g, f.type, depth - 1, doc, narrow)}`;
  });
  if (chance(g, 0.1)) parts.push("__typename");
  if (chance(g, 0.03)) parts.push(`${g(() => shortHostileString).replace(/[^_A-Za-z0-9]/g, "") || "nope"}Unknown`);
  let body = parts.join(" ");
  if (chance(g, 0.1)) body = `... on ${named.name} { ${body} }`;
  else if (chance(g, 0.08)) {
    const name = `F${doc.nextName++}`;
    doc.fragments.push(`fragment ${name} on ${chance(g, 0.9) ? named.name : "Device"} { ${body} }`);
    body = `...${name}`;
  }
  return `{ ${body} }`;
}

type Style = "variables" | "literals" | "wrong-types" | "missing-variable" | "undeclared-variable" | "wrong-declaration" | "deep" | "two-operations" | "truncated" | "junk" | "bad-body";

const STYLES: Array<{ weight: number; arbitrary: fc.Arbitrary<Style> }> = [
  { weight: 40, arbitrary: fc.constant("variables") },
  { weight: 12, arbitrary: fc.constant("literals") },
  { weight: 12, arbitrary: fc.constant("wrong-types") },
  { weight: 5, arbitrary: fc.constant("missing-variable") },
  { weight: 3, arbitrary: fc.constant("undeclared-variable") },
  { weight: 5, arbitrary: fc.constant("wrong-declaration") },
  { weight: 4, arbitrary: fc.constant("deep") },
  { weight: 3, arbitrary: fc.constant("two-operations") },
  { weight: 5, arbitrary: fc.constant("truncated") },
  { weight: 4, arbitrary: fc.constant("junk") },
  { weight: 4, arbitrary: fc.constant("bad-body") },
];

const typeString = (t: GraphQLInputType): string => String(t);

function operation(g: G, root: RootField, style: Style, pool: Pool): { query: string; variables: Record<string, unknown>; operationName?: string } {
  const doc: Doc = { fragments: [], nextName: 0 };
  const decls: string[] = [];
  const variables: Record<string, unknown> = {};
  const args: string[] = [];
  const budget: Budget = { chars: 400_000 };
  root.field.args.forEach((arg: GraphQLArgument, i) => {
    const required = isNonNullType(arg.type);
    if (!required && !chance(g, 0.6)) return;
    const wrongRate = style === "wrong-types" ? 0.3 : 0;
    const value = inputValue(g, arg.type, arg.name, pool, wrongRate, budget);
    if (style === "literals") {
      args.push(`${arg.name}: ${literal(value, arg.type)}`);
      return;
    }
    const v = `v${i}`;
    const declared = style === "wrong-declaration" && chance(g, 0.7) ? pick(g, ["String", "Int!", "[ID!]", "JSON", "Boolean", "ArqFilter"]) : typeString(arg.type);
    decls.push(`$${v}: ${declared}`);
    args.push(`${arg.name}: $${v}`);
    if (!(style === "missing-variable" && required)) variables[v] = value;
  });
  if (style === "undeclared-variable") args.push(`${root.field.args[0]?.name ?? "nope"}: $undeclared`);
  const sel = style === "deep" ? selection(g, root.field.type, g(fc.integer, { min: 10, max: 60 }), doc, true) : selection(g, root.field.type, g(fc.integer, { min: 1, max: 4 }), doc);
  const argText = args.length ? `(${args.join(", ")})` : "";
  const copies = root.kind === "mutation" || root.kind === "subscription" ? (chance(g, 0.1) ? 2 : 1) : g(fc.integer, { min: 1, max: 3 });
  const fields = Array.from({ length: copies }, (_, i) => `${copies > 1 || chance(g, 0.1) ? `r${i}: ` : ""}${root.field.name}${argText} ${sel}`).join(" ");
  const name = chance(g, 0.5) ? ` Op${g(fc.integer, { min: 0, max: 9 })}` : "";
  const head = `${root.kind}${name}${decls.length ? `(${decls.join(", ")})` : ""}`;
  let query = `${head} { ${fields} } ${doc.fragments.join(" ")}`;
  let operationName: string | undefined = name ? name.trim() : undefined;
  if (style === "two-operations") {
    query = `${query} query Other { __typename }`;
    operationName = chance(g, 0.5) ? undefined : pick(g, ["Other", "Missing", name.trim() || "Op0"]);
  }
  if (style === "truncated") query = query.slice(0, g(fc.integer, { min: 0, max: Math.max(0, query.length - 1) }));
  return { query, variables, operationName };
}

const JUNK_DOCUMENTS = fc.oneof(
  hostileString,
  fc.constantFrom("{", "}", "query", "mutation {", "subscription { }", "{ __schema { types { name } } }", "{ __type(name: \"Device\") { fields { name } } }", "query Q($x: Int = \"s\") { __typename }", "{ ...F } fragment F on Query { ...F }", "query { __typename @skip(if: $nope) }", "{ a: __typename a: deviceProfiles { uuid } }"),
  fc.integer({ min: 50, max: 2_000 }).map((n) => `${"{ deviceProfiles ".repeat(n)}${"}".repeat(n)}`),
  fc.integer({ min: 50, max: 2_000 }).map((n) => `query { deviceProfiles(names: ${"[".repeat(n)}"x"${"]".repeat(n)}) { uuid } }`),
);

const BAD_BODIES = fc.oneof(
  fc.constantFrom("", "{", "[]", "null", "\"query\"", "{}", "{\"query\": 5}", "{\"query\": null}", "{\"query\": \"{ __typename }\", \"variables\": \"x\"}", "{\"query\": \"{ __typename }\", \"variables\": [1]}", "{\"query\": \"{ __typename }\", \"operationName\": 7}", "{\"query\": \"{ __typename }\", \"extensions\": {\"persistedQuery\": {\"version\": 1, \"sha256Hash\": \"abc\"}}}", "[{\"query\": \"{ __typename }\"}]"),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.integer({ min: 1_000, max: 100_000 }).map((n) => expandDeep(JSON.stringify({ query: "{ __typename }", variables: { v: deepJson(n, n % 2 === 0) } }))),
);

/** One request against one root field (or a junk request), from one caller. */
export function graphqlCase(schema: GraphQLSchema, pool: Pool, callers: readonly Caller[] = [...WHO, null, "unknown"]): fc.Arbitrary<GraphqlCase> {
  const roots = rootFields(schema);
  return fc.gen().map((g) => {
    const who = pick(g, callers);
    const root = pick(g, roots);
    const style = g(() => fc.oneof(...STYLES));
    const target = `${root.kind}.${root.field.name}`;
    if (style === "junk") return { who, text: JSON.stringify({ query: g(() => JUNK_DOCUMENTS), variables: {} }), target: "junk", kind: "query", style };
    if (style === "bad-body") return { who, text: g(() => BAD_BODIES), target: "bad-body", kind: "query", style };
    const op = operation(g, root, style, pool);
    const body: Record<string, unknown> = { query: op.query, variables: op.variables };
    if (op.operationName !== undefined) body.operationName = op.operationName;
    return { who, text: expandDeep(JSON.stringify(body)), target, kind: root.kind, style };
  });
}

import { parse, type GraphQLSchema } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import { checkGuards, costDependsOnVariables, DEFAULT_GUARDS } from "../../src/api/graphql/guards.js";
import { getSchema } from "../../src/api/graphql/schema.js";

let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await getSchema();
});

const refusal = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { extensions?: { code?: string } }).extensions?.code;
  }
};

describe("query guards", () => {
  it("knows which documents the variables can make costlier", () => {
    expect(costDependsOnVariables(parse(`query($n: Int) { devices(first: $n) { nodes { uuid } } }`))).toBe(true);
    expect(costDependsOnVariables(parse(`query($x: Boolean!) { devices { nodes { uuid @include(if: $x) } } }`))).toBe(true);
    expect(costDependsOnVariables(parse(`query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { uuid } } }`))).toBe(false);
    expect(costDependsOnVariables(parse(`{ devices(first: 5) { nodes { uuid } } }`))).toBe(false);
  });

  it("a page size given as a variable is judged on every request, not remembered from the first", () => {
    const doc = parse(`query($n: Int) { devices(first: $n) { nodes { uuid deployables { uuid } } } }`);
    const limits = { ...DEFAULT_GUARDS, maxComplexity: 500 };
    expect(refusal(() => checkGuards(schema, doc, null, { n: 2 }, limits))).toBeUndefined();
    expect(refusal(() => checkGuards(schema, doc, null, { n: 1000 }, limits))).toBe("QUERY_TOO_COMPLEX");
    expect(refusal(() => checkGuards(schema, doc, null, { n: 2 }, limits))).toBeUndefined();
  });

  it("a remembered verdict refuses again, with a fresh error each time, and other limits are judged anew", () => {
    const doc = parse(`{ devices(first: 1000) { nodes { uuid deployables { uuid } } } }`);
    const tight = { ...DEFAULT_GUARDS, maxComplexity: 500 };
    const errors: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      try {
        checkGuards(schema, doc, null, {}, tight);
      } catch (err) {
        errors.push(err);
      }
    }
    expect(errors).toHaveLength(2);
    expect(errors[0]).not.toBe(errors[1]);
    expect((errors[1] as { extensions: { code: string } }).extensions.code).toBe("QUERY_TOO_COMPLEX");
    expect(refusal(() => checkGuards(schema, doc, null, {}, DEFAULT_GUARDS))).toBeUndefined();
  });

  it("variables that do not coerce are left to the executor and not remembered", () => {
    const doc = parse(`query($i: ID!) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { uuid } } }`);
    expect(refusal(() => checkGuards(schema, doc, null, {}))).toBeUndefined();
    expect(refusal(() => checkGuards(schema, doc, null, { i: "x" }))).toBeUndefined();
  });
});

describe("query text", () => {
  it("counts bracket nesting outside strings and comments", async () => {
    const { nesting } = await import("../../src/api/graphql/guards.js");
    expect(nesting(`{ a { b(x: [1, {c: 2}]) } }`, 64)).toBe(5);
    expect(nesting(`{ a(s: "{{{{[[[", t: """ {{{{ \\""" {{ """) } # {{{{{{`, 64)).toBe(2);
    expect(nesting(`{ a(s: "\\"{{{{") }`, 64)).toBe(2);
    expect(nesting("{a:".repeat(5000), 64)).toBe(65);
  });
});

import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema } from "graphql";
import { DEFAULT_GUARDS, isTokenLimit, queryTextRefusal, tooComplex } from "./guards.js";

/**
 * Parsed and validated documents by query text (bounded, least recently used out). Clients send
 * the same text with new variables, so each text is parsed and validated once, as Apollo does for
 * HTTP; graphql-ws on its own would do both for every subscribe message.
 */
export class DocumentCache {
  private readonly entries = new Map<string, DocumentNode | readonly GraphQLError[]>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly max = 1000,
  ) {}

  get(query: string): DocumentNode | readonly GraphQLError[] {
    const tooLong = queryTextRefusal(query);
    if (tooLong) return [tooLong];
    const hit = this.entries.get(query);
    if (hit) {
      this.entries.delete(query);
      this.entries.set(query, hit);
      return hit;
    }
    let result: DocumentNode | readonly GraphQLError[];
    try {
      const document = parse(query, { maxTokens: DEFAULT_GUARDS.maxTokens });
      const errors = validate(this.schema, document);
      result = errors.length ? errors : document;
    } catch (err) {
      if (err instanceof GraphQLError && isTokenLimit(err)) result = [tooComplex(`the query has more than ${DEFAULT_GUARDS.maxTokens} tokens; the limit is ${DEFAULT_GUARDS.maxTokens}`)];
      else result = [err instanceof GraphQLError ? err : new GraphQLError(String(err))];
    }
    this.entries.set(query, result);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return result;
  }
}

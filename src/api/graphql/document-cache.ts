import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema } from "graphql";
import { DEFAULT_GUARDS, isTokenLimit, queryTextRefusal, tooComplex } from "./guards.js";

/**
 * Parsed and validated documents by query text (bounded by count and by the characters held,
 * least recently used out). Clients send the same text with new variables, so each text is parsed
 * and validated once, as Apollo does for HTTP; graphql-ws on its own would do both for every
 * subscribe message. Refusals carry the code Apollo gives the same failure over HTTP.
 */
export class DocumentCache {
  private readonly entries = new Map<string, DocumentNode | readonly GraphQLError[]>();
  private chars = 0;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly max = 1000,
    private readonly maxChars = 4_000_000,
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
    const result = this.compile(query);
    this.entries.set(query, result);
    this.chars += query.length;
    while (this.entries.size > this.max || this.chars > this.maxChars) {
      const oldest = this.entries.keys().next().value!;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
    return result;
  }

  private compile(query: string): DocumentNode | readonly GraphQLError[] {
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: DEFAULT_GUARDS.maxTokens });
    } catch (err) {
      if (err instanceof GraphQLError && isTokenLimit(err)) return [tooComplex(`the query has more than ${DEFAULT_GUARDS.maxTokens} tokens; the limit is ${DEFAULT_GUARDS.maxTokens}`)];
      return [withCode(err instanceof GraphQLError ? err : new GraphQLError(String(err)), "GRAPHQL_PARSE_FAILED")];
    }
    const errors = validate(this.schema, document);
    return errors.length ? errors.map((e) => withCode(e, "GRAPHQL_VALIDATION_FAILED")) : document;
  }
}

function withCode(err: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(err.message, { nodes: err.nodes, source: err.source, positions: err.positions, path: err.path, originalError: err.originalError, extensions: { ...err.extensions, code } });
}
